import { diag } from '@opentelemetry/api';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE, type ExpositionFormat } from './prometheus-serializer';

export const DEFAULT_PROMETHEUS_PORT = 9464;
export const DEFAULT_PROMETHEUS_HOST = '0.0.0.0';
export const DEFAULT_METRICS_PATH = '/metrics';

/** Anything that renders the exposition: an `OmniPrometheusReader`, or a cluster aggregate. */
export interface MetricsTextSource {
  metricsText(format: ExpositionFormat): Promise<string>;
  /** The same as UTF-8 bytes, when the source renders bytes directly (served without re-encoding). */
  metricsBytes?(format: ExpositionFormat): Promise<Buffer>;
}

/** Node's request listener shape, plus the optional `next` that express/connect/fastify-middie pass. */
export type MetricsMiddleware = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * A handler for `GET|HEAD <path>` that serves the reader's text (OpenMetrics when the scraper's
 * `Accept` asks for it). Other methods on the path get 405. Other paths go to `next` when the
 * host's framework provides one (mounted middleware), or 404 on a bare `node:http` server.
 */
export function createMetricsHandler(reader: MetricsTextSource, path: string = DEFAULT_METRICS_PATH): MetricsMiddleware {
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
    const format = negotiateFormat(request.headers.accept);
    const rendering: Promise<string | Buffer> = reader.metricsBytes ? reader.metricsBytes(format) : reader.metricsText(format);
    rendering.then(
      (body) => {
        response.statusCode = 200;
        response.setHeader('Content-Type', format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : TEXT_CONTENT_TYPE);
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        diag.error('omni-otel-metrics: metrics collection failed', error);
        reply(response, 500, 'metrics collection failed\n');
      },
    );
  };
}

/** OpenMetrics only when the scraper names it; everything else gets the 0.0.4 text format. */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  return accept !== undefined && accept.includes('application/openmetrics-text') ? 'openmetrics' : 'text';
}

function reply(response: ServerResponse, status: number, body: string): void {
  response.statusCode = status;
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end(body);
}

export interface PrometheusServerOptions {
  /** Default `OTEL_EXPORTER_PROMETHEUS_HOST`, else 0.0.0.0. */
  readonly host?: string;
  /** Default `OTEL_EXPORTER_PROMETHEUS_PORT`, else 9464; 0 picks a free port. */
  readonly port?: number;
  readonly path?: string;
}

export interface PrometheusServer {
  readonly host: string;
  readonly port: number;
  /** Scrape URL, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the reader on its own port. Resolves once listening; rejects on bind errors. */
export async function startPrometheusServer(
  reader: MetricsTextSource,
  options: PrometheusServerOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<PrometheusServer> {
  const host = options.host ?? nonEmpty(env.OTEL_EXPORTER_PROMETHEUS_HOST) ?? DEFAULT_PROMETHEUS_HOST;
  const port = options.port ?? parsePort(env.OTEL_EXPORTER_PROMETHEUS_PORT) ?? DEFAULT_PROMETHEUS_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`prometheus.port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const path = options.path ?? DEFAULT_METRICS_PATH;
  const server = createServer(createMetricsHandler(reader, path));
  await listen(server, host, port);
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port: bound,
    url: `http://${urlHost}:${bound}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function parsePort(value: string | undefined): number | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw new RangeError(`OTEL_EXPORTER_PROMETHEUS_PORT must be an integer from 0 to 65535, got "${text}"`);
  }
  return port;
}
