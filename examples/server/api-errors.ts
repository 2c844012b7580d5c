import type { ServerResponse } from 'node:http';
import { InvalidRequestError } from '../pipeline/invalid-request-error';
import { HttpError } from './http-error';
import { sendError } from './http-json';

/** The status a failure answers with: 400 for bad input, 503 while shutting down, 500 otherwise. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof InvalidRequestError) return new HttpError(400, error.message, 'invalid_request_error', error.param);
  const message = error instanceof Error ? error.message : String(error);
  if (/shutting down/.test(message)) return new HttpError(503, message, 'service_unavailable');
  return new HttpError(500, message);
}

/** Answers a failed API request: OpenAI's error body, or just the end of a response already under way. */
export function sendApiError(response: ServerResponse, error: unknown): void {
  if (response.headersSent) {
    if (!response.writableEnded) response.end();
    return;
  }
  sendError(response, toHttpError(error));
}
