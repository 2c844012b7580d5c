import { diag } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { coalesced } from './coalesced';
import { acceptsGzip, negotiateFormat } from './content-negotiation';
import { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE, type ExpositionFormat } from './exposition-text';
import { challenges, isAuthorized, validateScrapeAuth, type ScrapeAuth } from './scrape-auth';

export const DEFAULT_METRICS_PATH = '/metrics';

/** Anything that renders the exposition: an `OmniPrometheusReader`, or a cluster aggregate. */
export interface MetricsTextSource {
  metricsText(format: ExpositionFormat): Promise<string>;
  /** The same as UTF-8 bytes, when the source renders bytes directly (served without re-encoding). */
  metricsBytes?(format: ExpositionFormat): Promise<Buffer>;
}

/** Node's request listener shape, plus the optional `next` that express/connect/fastify-middie pass. */
export type MetricsMiddleware = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void;

export interface MetricsHandlerOptions {
  /** Default `/metrics`. */
  readonly path?: string;
  /** Credentials a scrape must present; without them, 401. */
  readonly auth?: ScrapeAuth;
}

const gzipAsync = promisify(gzip);

/**
 * A handler for `GET|HEAD <path>` that serves the source's exposition: OpenMetrics when the
 * scraper's `Accept` prefers it (q-values honoured), gzip when `Accept-Encoding` allows it,
 * `Content-Length` always (HEAD: headers only). Other methods on the path get 405. Other paths go
 * to `next` when the host's framework provides one (mounted middleware), or 404 on a bare
 * `node:http` server: the host's own server stays in charge of everything else.
 */
export function createMetricsHandler(source: MetricsTextSource, pathOrOptions: string | MetricsHandlerOptions = {}): MetricsMiddleware {
  const options = typeof pathOrOptions === 'string' ? { path: pathOrOptions } : pathOrOptions;
  const path = options.path ?? DEFAULT_METRICS_PATH;
  validateScrapeAuth(options.auth, 'auth');
  const auth = options.auth;
  // Scrapes that overlap share one rendering, and one compression of it.
  const renderShared = coalesced((format: ExpositionFormat) => render(source, format));
  const compressed = new WeakMap<Buffer, Promise<Buffer>>();
  return (request, response, next) => {
    const pathname = (request.url ?? '/').split('?', 1)[0];
    if (pathname !== path) {
      if (next) return next();
      return reply(response, 404, `Not found: ${pathname}. Metrics are served at ${path}\n`);
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      return reply(response, 405, `Method ${request.method ?? ''} not allowed on ${path}\n`);
    }
    if (auth !== undefined && !isAuthorized(auth, request.headers)) {
      response.setHeader('WWW-Authenticate', challenges(auth));
      return reply(response, 401, 'Unauthorized\n');
    }
    const format = negotiateFormat(request.headers.accept);
    const gzipped = acceptsGzip(request.headers['accept-encoding']);
    renderShared(format)
      .then((bytes) => {
        if (!gzipped) return bytes;
        let body = compressed.get(bytes);
        if (body === undefined) {
          body = gzipAsync(bytes);
          compressed.set(bytes, body);
        }
        return body;
      })
      .then(
        (body) => {
          response.statusCode = 200;
          response.setHeader('Content-Type', format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : TEXT_CONTENT_TYPE);
          response.setHeader('Vary', 'Accept, Accept-Encoding');
          if (gzipped) response.setHeader('Content-Encoding', 'gzip');
          response.setHeader('Content-Length', body.length);
          response.end(request.method === 'HEAD' ? undefined : body);
        },
        (error: unknown) => {
          diag.error('omni-otel-metrics: metrics collection failed', error);
          reply(response, 500, 'metrics collection failed\n');
        },
      );
  };
}

async function render(source: MetricsTextSource, format: ExpositionFormat): Promise<Buffer> {
  return source.metricsBytes ? source.metricsBytes(format) : Buffer.from(await source.metricsText(format), 'utf8');
}

function reply(response: ServerResponse, status: number, body: string): void {
  response.statusCode = status;
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end(body);
}
