import { createServer, type Server, type ServerOptions } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { checkObject, checkString, optionKeys, shown } from '../views/common/option-checks';
import { ConnectionSlots } from './connection-slots';
import { holdPort, portHeldHere, releasePort } from './ports-held-here';
import { createMetricsHandler, DEFAULT_METRICS_PATH, type MetricsTextSource } from './metrics-handler';
import { validateScrapeAuth, type ScrapeAuth } from './scrape-auth';
import { readTlsCredentials, type TlsCredentials } from './tls-credentials';

export const DEFAULT_PROMETHEUS_PORT = 9464;
/** Loopback, as OpenTelemetry's `OTEL_EXPORTER_PROMETHEUS_HOST` default (`localhost`): metrics are not published to the network unless asked. */
export const DEFAULT_PROMETHEUS_HOST = '127.0.0.1';
export const DEFAULT_HEADERS_TIMEOUT_MILLIS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MILLIS = 60_000;
export const DEFAULT_MAX_CONNECTIONS = 64;
export const DEFAULT_WRITE_TIMEOUT_MILLIS = 60_000;
/**
 * How long `close()` lets responses being written finish (less when `writeTimeoutMillis` is
 * shorter) before it closes their connections: whatever readers do, the server is closed by then.
 */
export const SHUTDOWN_GRACE_MILLIS = 5000;

/** Where and how a `/metrics` server listens. */
export interface PrometheusServerOptions {
  /** Default `OTEL_EXPORTER_PROMETHEUS_HOST`, else 127.0.0.1 (loopback); `0.0.0.0` publishes to every interface. */
  readonly host?: string;
  /** Default `OTEL_EXPORTER_PROMETHEUS_PORT`, else 9464; 0 picks a free port. */
  readonly port?: number;
  /** The path metrics are served at; must start with `/`. Default `/metrics`. */
  readonly path?: string;
  /** Credentials every scrape must present (bearer token and/or basic auth). */
  readonly auth?: ScrapeAuth;
  /**
   * Serve HTTPS with this key and certificate (Prometheus: `scheme: https`). Both files are read
   * and checked as a pair before the server starts: a key that is not the certificate's is refused.
   */
  readonly tls?: {
    /** PEM private key file (unencrypted). */
    readonly keyFile: string;
    /** PEM certificate (chain) file; its first certificate must be the one of the key. */
    readonly certFile: string;
  };
  /**
   * A client must have sent its request headers within this time; default 10 000. For a new
   * connection it counts from the connect, TLS handshake included (the handshake alone is bounded
   * by it too), and is enforced by a timer per connection; for later requests on a keep-alive
   * connection Node checks it every tenth of it (at most every second).
   */
  readonly headersTimeoutMillis?: number;
  /** A connection with no traffic for this long is closed; default 60 000. */
  readonly idleTimeoutMillis?: number;
  /**
   * A response must be written within this time of its request, or its connection is closed;
   * default 60 000. Prometheus stops waiting for a scrape at its `scrape_timeout` (10 s by
   * default, never more than the scrape interval), so a response still being written after that
   * feeds nobody: only a client that reads a little now and then (a slow-read attack) lasts that long.
   */
  readonly writeTimeoutMillis?: number;
  /**
   * Connections open at once; default 64. At the cap a new connection is not refused while a slot
   * is held by a client that is not being answered: it takes the slot of the oldest connection that
   * has not yet sent a whole request (a silent socket, headers still trickling in, a TLS handshake
   * not finished), else of the oldest keep-alive connection idle between requests. Only when every
   * connection is being answered is the new one refused, unless a client being answered has read
   * nothing for a second or more (a client that sent `GET` and stopped reading): the one that has
   * read nothing for the longest loses its slot. A flood of slow clients therefore cannot lock
   * Prometheus out; each eviction or refusal is reported by a rate-limited diag warning.
   * No per-address limit applies: scrapers behind one NAT, or on loopback, share an address with
   * whoever floods.
   */
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
  writeTimeoutMillis: true,
  maxConnections: true,
});

/** What a Prometheus server is started with: options over `OTEL_EXPORTER_PROMETHEUS_*` over defaults, files read. */
export interface PrometheusServerSettings {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly auth?: ScrapeAuth;
  readonly tls?: TlsCredentials;
  readonly headersTimeoutMillis: number;
  readonly idleTimeoutMillis: number;
  readonly writeTimeoutMillis: number;
  readonly maxConnections: number;
  /** How long `close()` lets responses being written finish; `SHUTDOWN_GRACE_MILLIS`, or `writeTimeoutMillis` when shorter. */
  readonly shutdownGraceMillis: number;
}

/** Settles and checks every server option (reading the TLS files) before anything listens; throws naming the option. */
export function resolvePrometheusServerSettings(options: PrometheusServerOptions = {}, env: NodeJS.ProcessEnv = process.env): PrometheusServerSettings {
  if (options.tls !== undefined) checkObject(options.tls, 'prometheus.tls', ['keyFile', 'certFile']);
  checkString(options.host, 'prometheus.host');
  const host = options.host ?? nonEmpty(env.OTEL_EXPORTER_PROMETHEUS_HOST) ?? DEFAULT_PROMETHEUS_HOST;
  const port = options.port ?? parsePort(env.OTEL_EXPORTER_PROMETHEUS_PORT) ?? DEFAULT_PROMETHEUS_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`prometheus.port must be an integer from 0 to 65535; got ${shown(port)}`);
  }
  const path = options.path ?? DEFAULT_METRICS_PATH;
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`prometheus.path must start with '/'; got ${shown(path)}`);
  validateScrapeAuth(options.auth, 'prometheus.auth');
  const writeTimeoutMillis = positiveInteger(options.writeTimeoutMillis, DEFAULT_WRITE_TIMEOUT_MILLIS, 'prometheus.writeTimeoutMillis');
  return {
    host,
    port,
    path,
    auth: options.auth,
    tls: options.tls === undefined ? undefined : readTlsCredentials(options.tls),
    headersTimeoutMillis: positiveInteger(options.headersTimeoutMillis, DEFAULT_HEADERS_TIMEOUT_MILLIS, 'prometheus.headersTimeoutMillis'),
    idleTimeoutMillis: positiveInteger(options.idleTimeoutMillis, DEFAULT_IDLE_TIMEOUT_MILLIS, 'prometheus.idleTimeoutMillis'),
    writeTimeoutMillis,
    maxConnections: positiveInteger(options.maxConnections, DEFAULT_MAX_CONNECTIONS, 'prometheus.maxConnections'),
    shutdownGraceMillis: Math.min(SHUTDOWN_GRACE_MILLIS, writeTimeoutMillis),
  };
}

/** A running `/metrics` server. */
export interface PrometheusServer {
  /** The host the server listens on, as configured (`host`, else `OTEL_EXPORTER_PROMETHEUS_HOST`, else 127.0.0.1). */
  readonly host: string;
  /** The port the server listens on: the one picked when 0 was asked for. */
  readonly port: number;
  /** Scrape URL, e.g. `http://127.0.0.1:9464/metrics` (`https://` with TLS). */
  readonly url: string;
  /** Stops the server: responses being written get a short grace period, other connections are closed; resolves once it has closed. */
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
  const httpOptions: ServerOptions = {
    headersTimeout: settings.headersTimeoutMillis,
    requestTimeout: settings.headersTimeoutMillis * 2,
    // Node enforces headersTimeout and requestTimeout only when it checks, every 30 s by default:
    // a client given 10 s would keep its slot for up to 40 s.
    connectionsCheckingInterval: connectionsCheckingInterval(settings.headersTimeoutMillis),
  };
  const server: Server = settings.tls
    ? createTlsServer({ ...httpOptions, key: settings.tls.key, cert: settings.tls.cert, handshakeTimeout: settings.headersTimeoutMillis }, handler)
    : createServer(httpOptions, handler);
  // A socket silent for this long is destroyed (the server has no 'timeout' listener): one that
  // never sends a byte cannot hold a file descriptor forever.
  server.setTimeout(settings.idleTimeoutMillis);
  // The cap is kept by the slots (Node's maxConnections refuses newcomers, so slow clients holding
  // every slot would lock scrapers out), as is the first request's deadline.
  const slots = new ConnectionSlots(server, {
    maxConnections: settings.maxConnections,
    firstRequestTimeoutMillis: settings.headersTimeoutMillis,
    secure: settings.tls !== undefined,
    writeTimeoutMillis: settings.writeTimeoutMillis,
  });
  // close() waits for every open connection, and closeIdleConnections() spares one that has not sent
  // a whole request (a client that connected and sent nothing, headers still arriving, a TLS
  // handshake never finished): such a client would hold close(), and the handle's shutdown(), until
  // the idle timeout. So close() lets the responses being written finish, then destroys the rest;
  // and gives them `shutdownGraceMillis`, as a client that stopped reading would never let its
  // response finish.
  let closing = false;
  const destroyConnections = (): void => slots.destroyAll();
  slots.onAllAnswered(() => {
    if (closing) destroyConnections();
  });
  await listen(server, settings.host, settings.port);
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  holdPort(bound);
  server.once('close', () => releasePort(bound));
  const host = settings.host;
  const urlHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port: bound,
    url: `${settings.tls ? 'https' : 'http'}://${urlHost}:${bound}${settings.path}`,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        let grace: NodeJS.Timeout | undefined;
        server.close(() => {
          clearTimeout(grace);
          resolve();
        });
        if (slots.responding === 0) destroyConnections();
        else {
          server.closeIdleConnections();
          grace = setTimeout(destroyConnections, settings.shutdownGraceMillis).unref();
        }
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
    error.code === 'EADDRINUSE' && portHeldHere(port)
      ? 'this port is held by an earlier registerOmniMetrics handle in this process (shut that handle down first, or keep using it)'
      : error.code === 'EADDRINUSE'
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

/** A tenth of the headers timeout, between 50 ms and 1 s: the timeout holds within 10 % for a cost of one walk over at most `maxConnections` sockets. */
function connectionsCheckingInterval(headersTimeoutMillis: number): number {
  return Math.min(1000, Math.max(50, Math.floor(headersTimeoutMillis / 10)));
}

function positiveInteger(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${option} must be a positive integer; got ${shown(value)}`);
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
    throw new RangeError(`OTEL_EXPORTER_PROMETHEUS_PORT must be an integer from 0 to 65535; got "${text}"`);
  }
  return port;
}
