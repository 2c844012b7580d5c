import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http-error';

/** Larger chat bodies are refused with 413; the simulated model has a 4k context anyway. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads and parses a JSON body; 413 when too large, 400 when not JSON. */
export async function readJsonBody(request: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) throw new HttpError(413, `request body exceeds ${maxBytes} bytes`);
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'request body is empty; expected JSON');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
export function errorBody(error: HttpError): { error: { message: string; type: string; param: string | null; code: number } } {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.status } };
}

export function sendError(response: ServerResponse, error: HttpError): void {
  sendJson(response, error.status, errorBody(error));
}
