import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import type { AsyncOmni } from '../pipeline/async-omni';
import { ADMIN_REPLICAS_PATH, handleAdminReplicas, type AdminOptions } from './admin-replicas';
import { sendApiError } from './api-errors';
import { handleChatCompletions } from './chat-completions';
import { handleImageGenerations } from './image-generations';
import { handleRealtimeSessions, REALTIME_SESSIONS_PATH } from './realtime-sessions';
import { HttpError } from './http-error';
import { sendError, sendJson } from './http-json';
import { traceRequests } from './request-tracing';

/** Middleware shape of `metrics.metricsHandler()` (connect/express style): call `next()` to pass. */
export type ExtraHandler = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface OpenAiHandlerOptions {
  readonly omni: AsyncOmni;
  /** The served model name (`model` in requests and responses). */
  readonly modelName: string;
  /** `max_tokens` when a request sets none; default 256. */
  readonly defaultMaxTokens?: number;
  /** Serve `POST /v1/images/generations` (the pipeline has an image stage); default false. */
  readonly images?: boolean;
  /** Serve the replica scaling endpoint (`/admin/replicas`) behind this bearer token; absent by default. */
  readonly admin?: AdminOptions;
  /** Tried before the API routes (e.g. the package's `/metrics` middleware); its `next()` falls through. */
  readonly extraHandler?: ExtraHandler;
  /** Serve every API request (not the `extraHandler`'s, e.g. scrapes) inside a server span of this tracer. */
  readonly tracer?: Tracer;
}

/**
 * The request listener of an OpenAI-compatible server on plain `node:http`:
 * `POST /v1/chat/completions`, `POST /v1/images/generations`, the realtime audio sessions under `/v1/realtime/sessions`,
 * `GET /v1/models`, `GET /health`; JSON errors in OpenAI's shape
 * (400 bad input, 404 unknown route or model, 405 wrong method, 413 body too large).
 */
export function createOpenAiHandler(options: OpenAiHandlerOptions): RequestHandler {
  const created = Math.floor(Date.now() / 1000);
  const chatOptions = { omni: options.omni, modelName: options.modelName, defaultMaxTokens: options.defaultMaxTokens ?? 256 };
  const imageOptions = { omni: options.omni, modelName: options.modelName };

  const routes: RequestHandler = (request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    const admin = options.admin;
    if (admin !== undefined && (pathname === ADMIN_REPLICAS_PATH || pathname.startsWith(`${ADMIN_REPLICAS_PATH}/`))) {
      handleAdminReplicas(request, response, pathname, admin).catch((error: unknown) => sendApiError(response, error));
      return;
    }
    if (pathname === REALTIME_SESSIONS_PATH || pathname.startsWith(`${REALTIME_SESSIONS_PATH}/`)) {
      handleRealtimeSessions(request, response, pathname, options.omni).catch((error: unknown) => sendApiError(response, error));
      return;
    }
    switch (pathname) {
      case '/v1/chat/completions':
        if (request.method !== 'POST') return methodNotAllowed(response, 'POST');
        handleChatCompletions(request, response, chatOptions).catch((error: unknown) => sendApiError(response, error));
        return;
      case '/v1/images/generations':
        if (options.images !== true) break;
        if (request.method !== 'POST') return methodNotAllowed(response, 'POST');
        handleImageGenerations(request, response, imageOptions).catch((error: unknown) => sendApiError(response, error));
        return;
      case '/v1/models':
        if (request.method !== 'GET') return methodNotAllowed(response, 'GET');
        return sendJson(response, 200, {
          object: 'list',
          data: [
            {
              id: options.modelName,
              object: 'model',
              created,
              owned_by: 'omni-otel-metrics',
              root: options.modelName,
              max_model_len: options.omni.maxModelLen,
            },
          ],
        });
      case '/health':
        return sendJson(response, 200, { status: 'ok' });
    }
    sendError(response, new HttpError(404, `Route ${request.method ?? ''} ${pathname} not found`, 'NotFoundError'));
  };

  const route = options.tracer === undefined ? routes : traceRequests(routes, options.tracer);
  const extra = options.extraHandler;
  if (extra === undefined) return route;
  return (request, response) => {
    let passed = false;
    extra(request, response, (error) => {
      if (passed) return;
      passed = true;
      if (error !== undefined) sendError(response, new HttpError(500, error instanceof Error ? error.message : String(error)));
      else route(request, response);
    });
  };
}

function methodNotAllowed(response: ServerResponse, allowed: string): void {
  response.setHeader('Allow', allowed);
  sendError(response, new HttpError(405, `Method not allowed; use ${allowed}`));
}
