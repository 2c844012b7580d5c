import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AsyncOmni } from '../pipeline/async-omni';
import { HttpError } from './http-error';
import { readJsonBody, sendJson } from './http-json';

export const REALTIME_SESSIONS_PATH = '/v1/realtime/sessions';
/** One append carries at most this much PCM16 (about 16 s at 16 kHz). */
const MAX_AUDIO_BYTES = 512 * 1024;

/**
 * A realtime audio path over plain HTTP (vLLM-Omni serves the same over `/v1/realtime` WebSockets):
 * `POST /v1/realtime/sessions` `{ turn_detection: { type: 'server_vad' } | null }` opens a session;
 * `POST /v1/realtime/sessions/{id}/audio` with 16 kHz mono PCM16 (little-endian) as the body appends
 * audio and answers the server VAD's events; `DELETE /v1/realtime/sessions/{id}` closes it.
 */
export async function handleRealtimeSessions(request: IncomingMessage, response: ServerResponse, pathname: string, omni: AsyncOmni): Promise<void> {
  if (pathname === REALTIME_SESSIONS_PATH) {
    if (request.method !== 'POST') throw new HttpError(405, 'Method not allowed; use POST');
    const body = (await readJsonBody(request)) as { turn_detection?: { type?: string } | null } | null;
    const turnDetection = body?.turn_detection === undefined ? { type: 'server_vad' } : body.turn_detection;
    const id = `sess_${randomUUID()}`;
    omni.openRealtimeSession({ sessionId: id, turnDetection });
    return sendJson(response, 200, { id, object: 'realtime.session', turn_detection: turnDetection });
  }
  const match = /^\/v1\/realtime\/sessions\/([^/]+)(\/audio)?$/.exec(pathname);
  const id = match?.[1];
  if (id === undefined || !omni.hasRealtimeSession(id)) throw new HttpError(404, `no realtime session at ${pathname}`, 'NotFoundError');
  if (match?.[2] === undefined) {
    if (request.method !== 'DELETE') throw new HttpError(405, 'Method not allowed; use DELETE');
    omni.closeRealtimeSession(id);
    return sendJson(response, 200, { id, object: 'realtime.session.deleted', deleted: true });
  }
  if (request.method !== 'POST') throw new HttpError(405, 'Method not allowed; use POST');
  const pcm = await readPcm16(request);
  const batch = omni.appendRealtimeAudio(id, pcm);
  const events = (batch?.frames ?? []).flatMap(({ decision }) => [
    ...(decision.speechStarted ? [{ type: 'input_audio_buffer.speech_started' }] : []),
    ...(decision.speechStopped ? [{ type: 'input_audio_buffer.speech_stopped', endpoint_delay_ms: decision.endpointDelayMs }] : []),
  ]);
  sendJson(response, 200, { id, events });
}

async function readPcm16(request: IncomingMessage): Promise<Int16Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_AUDIO_BYTES) throw new HttpError(413, `an audio append carries at most ${MAX_AUDIO_BYTES} bytes`);
    chunks.push(buffer);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.length % 2 !== 0) throw new HttpError(400, 'PCM16 audio has an incomplete sample', 'invalid_request_error', 'audio');
  const samples = new Int16Array(bytes.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
  return samples;
}
