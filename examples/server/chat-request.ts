import type { OutputModality } from '../pipeline/pipeline-types';
import type { ChatMessage } from './chat-prompt';
import { HttpError } from './http-error';
import { invalid, isRecord, requestedModel } from './request-fields';

/** A validated `POST /v1/chat/completions` body, reduced to what the pipeline serves. */
export interface ChatCompletionParams {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly stream: boolean;
  /** `stream_options.include_usage`: a last chunk with token usage and no choices. */
  readonly includeUsage: boolean;
  /** `max_completion_tokens` or `max_tokens`; undefined lets the server pick. */
  readonly maxTokens: number | undefined;
  readonly modalities: readonly OutputModality[];
  readonly voice: string;
  /** OpenAI's `user`: the end user (or tenant) the request is made for; absent when the client sent none. */
  readonly user?: string;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/**
 * Checks a chat request the way the OpenAI API does for the fields this server supports, and
 * refuses (400) what it cannot honour rather than ignoring it silently: `n` > 1, non-text content
 * parts, audio formats other than raw `pcm16`. A different `model` is a 404, as in vLLM.
 */
export function parseChatCompletionRequest(body: unknown, servedModel: string): ChatCompletionParams {
  if (!isRecord(body)) throw new HttpError(400, 'request body must be a JSON object');
  const model = requestedModel(body, servedModel);

  const messages = parseMessages(body.messages);
  const stream = optionalBoolean(body.stream, 'stream') ?? false;
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isRecord(streamOptions)) throw invalid('stream_options must be an object', 'stream_options');
  const includeUsage = optionalBoolean(isRecord(streamOptions) ? streamOptions.include_usage : undefined, 'stream_options.include_usage') ?? false;

  const maxTokens = optionalPositiveInteger(body.max_completion_tokens, 'max_completion_tokens') ?? optionalPositiveInteger(body.max_tokens, 'max_tokens');
  const n = optionalPositiveInteger(body.n, 'n');
  if (n !== undefined && n !== 1) throw invalid('only n=1 is supported', 'n');

  const modalities = parseModalities(body.modalities);
  const voice = parseAudio(body.audio);
  const user = body.user ?? undefined;
  if (user !== undefined && typeof user !== 'string') throw invalid('user must be a string', 'user');
  return { model, messages, stream, includeUsage, maxTokens, modalities, voice, ...(user === undefined ? {} : { user }) };
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  return value.map((message, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw invalid(`${param} must be an object`, param);
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw invalid(`${param}.role must be one of ${[...ROLES].join(', ')}`, `${param}.role`);
    }
    return { role: message.role, content: parseContent(message.content, `${param}.content`) };
  });
}

function parseContent(content: unknown, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of content parts`, param);
  return content
    .map((part, index) => {
      if (!isRecord(part) || part.type !== 'text' || typeof part.text !== 'string') {
        throw invalid(`${param}[${index}]: only {"type": "text", "text": ...} content parts are supported`, `${param}[${index}]`);
      }
      return part.text;
    })
    .join('\n');
}

function parseModalities(value: unknown): OutputModality[] {
  if (value === undefined || value === null) return ['text'];
  if (!Array.isArray(value) || value.length === 0 || value.some((m) => m !== 'text' && m !== 'audio')) {
    throw invalid('modalities must be a non-empty array of "text" and "audio"', 'modalities');
  }
  return [...new Set(value as OutputModality[])];
}

/** The voice; the only audio format produced is raw little-endian PCM16 at 24 kHz. */
function parseAudio(value: unknown): string {
  if (value === undefined || value === null) return 'alloy';
  if (!isRecord(value)) throw invalid('audio must be an object', 'audio');
  if (value.format !== undefined && value.format !== 'pcm16') {
    throw invalid(`audio.format ${JSON.stringify(value.format)} is not supported; use "pcm16" (24 kHz mono)`, 'audio.format');
  }
  const voice = value.voice ?? 'alloy';
  if (typeof voice === 'string' && voice !== '') return voice;
  if (isRecord(voice) && typeof voice.id === 'string' && voice.id !== '') return voice.id;
  throw invalid('audio.voice must be a voice name or {"id": ...}', 'audio.voice');
}

function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${param} must be a boolean`, param);
  return value;
}

function optionalPositiveInteger(value: unknown, param: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid(`${param} must be a positive integer`, param);
  return value;
}
