import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { checkObject, checkString, optionKeys } from '../views/option-checks';
import { createMetricsHandler, DEFAULT_METRICS_PATH, type MetricsTextSource } from './metrics-handler';
import { validateScrapeAuth, type ScrapeAuth } from './scrape-auth';

export const DEFAULT_PROMETHEUS_PORT = 9464;
/** Loopback, as OpenTelemetry's `OTEL_EXPORTER_PROMETHEUS_HOST` default (`localhost`): metrics are not published to the network unless asked. */
export const DEFAULT_PROMETHEUS_HOST = '127.0.0.1';
export const DEFAULT_HEADERS_TIMEOUT_MILLIS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MILLIS = 60_000;
export const DEFAULT_MAX_CONNECTIONS = 64;

export interface PrometheusTlsOptions {
  /** PEM private key file. */
  readonly keyFile: string;
  /** PEM certificate (chain) file. */
  readonly certFile: string;
}

export interface PrometheusServerOptions {
  /** Default `OTEL_EXPORTER_PROMETHEUS_HOST`, else 127.0.0.1 (loopback); `0.0.0.0` publishes to every interface. */
  readonly host?: string;
  /** Default `OTEL_EXPORTER_PROMETHEUS_PORT`, else 9464; 0 picks a free port. */
  readonly port?: number;
  readonly path?: string;
  /** Credentials every scrape must present (bearer token and/or basic auth). */
  readonly auth?: ScrapeAuth;
  /** Serve HTTPS with this key and certificate (Prometheus: `scheme: https`). */
  readonly tls?: PrometheusTlsOptions;
  /** A client must have sent its request headers within this time; default 10 000. */
  readonly headersTimeoutMillis?: number;
  /** A connection with no traffic for this long is closed; default 60 000. */
  readonly idleTimeoutMillis?: number;
  /** Connections open at once; more are refused. Default 64. */
  readonly maxConnections?: number;
}

export const PROMETHEUS_SERVER_OPTION_KEYS = optionKeys<PrometheusServerOptions>({
  host: true,
  port: true,
  path: true,
  auth: true,
  tls: true,
  headersTimeoutMillis: true,
  idleTimeoutMillis: true,
  maxConnections: true,
});

/** What a Prometheus server is started with: options over `OTEL_EXPORTER_PROMETHEUS_*` over defaults, files read. */
export interface PrometheusServerSettings {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly auth?: ScrapeAuth;
  readonly tls?: { readonly key: Buffer; readonly cert: Buffer };
  readonly headersTimeoutMillis: number;
  readonly idleTimeoutMillis: number;
  readonly maxConnections: number;
}

/** Settles and checks every server option (reading the TLS files) before anything listens; throws naming the option. */
export function resolvePrometheusServerSettings(options: PrometheusServerOptions = {}, env: NodeJS.ProcessEnv = process.env): PrometheusServerSettings {
  if (options.tls !== undefined) checkObject(options.tls, 'prometheus.tls', ['keyFile', 'certFile']);
  checkString(options.host, 'prometheus.host');
  const host = options.host ?? nonEmpty(env.OTEL_EXPORTER_PROMETHEUS_HOST) ?? DEFAULT_PROMETHEUS_HOST;
  const port = options.port ?? parsePort(env.OTEL_EXPORTER_PROMETHEUS_PORT) ?? DEFAULT_PROMETHEUS_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`prometheus.port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const path = options.path ?? DEFAULT_METRICS_PATH;
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`prometheus.path must start with '/', got ${String(path)}`);
  validateScrapeAuth(options.auth, 'prometheus.auth');
  return {
    host,
    port,
    path,
    auth: options.auth,
    tls:
      options.tls === undefined
        ? undefined
        : { key: readPem(options.tls.keyFile, 'prometheus.tls.keyFile'), cert: readPem(options.tls.certFile, 'prometheus.tls.certFile') },
    headersTimeoutMillis: positiveInteger(options.headersTimeoutMillis, DEFAULT_HEADERS_TIMEOUT_MILLIS, 'prometheus.headersTimeoutMillis'),
    idleTimeoutMillis: positiveInteger(options.idleTimeoutMillis, DEFAULT_IDLE_TIMEOUT_MILLIS, 'prometheus.idleTimeoutMillis'),
    maxConnections: positiveInteger(options.maxConnections, DEFAULT_MAX_CONNECTIONS, 'prometheus.maxConnections'),
  };
}

export interface PrometheusServer {
  readonly host: string;
  readonly port: number;
  /** Scrape URL, e.g. `http://127.0.0.1:9464/metrics` (`https://` with TLS). */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the source on its own port. Resolves once listening; rejects on bad options and bind errors. */
export async function startPrometheusServer(
  source: MetricsTextSource,
  options: PrometheusServerOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<PrometheusServer> {
  return serveMetrics(source, resolvePrometheusServerSettings(options, env));
}

/** Serves the source with settings already resolved (`resolvePrometheusServerSettings`). */
export async function serveMetrics(source: MetricsTextSource, settings: PrometheusServerSettings): Promise<PrometheusServer> {
  const handler = createMetricsHandler(source, { path: settings.path, auth: settings.auth });
  const server: Server = settings.tls ? createTlsServer({ key: settings.tls.key, cert: settings.tls.cert }, handler) : createServer(handler);
  server.headersTimeout = settings.headersTimeoutMillis;
  server.requestTimeout = settings.headersTimeoutMillis * 2;
  // A socket silent for this long is destroyed (the server has no 'timeout' listener): one that
  // never sends a byte cannot hold a file descriptor forever.
  server.setTimeout(settings.idleTimeoutMillis);
  server.maxConnections = settings.maxConnections;
  // close() waits for every open connection, and closeIdleConnections() spares one that has not sent
  // a whole request (a client that connected and sent nothing, headers still arriving, a TLS
  // handshake never finished): such a client would hold close(), and the handle's shutdown(), until
  // the idle timeout. So close() lets the responses being written finish, then destroys the rest.
  const connections = new Set<Socket>();
  let responding = 0;
  let closing = false;
  const destroyConnections = (): void => {
    for (const socket of connections) socket.destroy();
  };
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    responding++;
    response.once('close', () => {
      responding--;
      if (closing && responding === 0) destroyConnections();
    });
  });
  await listen(server, settings.host, settings.port);
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  const host = settings.host;
  const urlHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port: bound,
    url: `${settings.tls ? 'https' : 'http'}://${urlHost}:${bound}${settings.path}`,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        if (responding === 0) destroyConnections();
        else server.closeIdleConnections();
      }),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(listenError(error, host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/**
 * A bind failure that says which server failed and which option moves it: a bare EADDRINUSE does
 * not tell a user that NodeSDK's own Prometheus exporter took the same default port.
 */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const reason =
    error.code === 'EADDRINUSE'
      ? `the port is in use (another server has it; a NodeSDK PrometheusExporter also defaults to ${DEFAULT_PROMETHEUS_PORT})`
      : error.code === 'EACCES'
        ? 'permission denied'
        : error.code === 'EADDRNOTAVAIL'
          ? "the address is not one of this machine's"
          : error.message;
  const wrapped: NodeJS.ErrnoException = new Error(
    `omni-otel-metrics: the /metrics server cannot listen on ${host}:${port}: ${reason}. Set prometheus.host / prometheus.port (or OTEL_EXPORTER_PROMETHEUS_HOST / _PORT), or prometheus: false and mount handle.metricsHandler() on your own server.`,
    { cause: error },
  );
  wrapped.code = error.code;
  return wrapped;
}

function readPem(file: string, option: string): Buffer {
  if (typeof file !== 'string' || file === '') throw new TypeError(`${option} must be a file path`);
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`${option}: cannot read ${file} (${(error as Error).message})`, { cause: error });
  }
}

function positiveInteger(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${option} must be a positive integer, got ${String(value)}`);
  return value;
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
