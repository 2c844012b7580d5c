import { packageDiag } from '../views/common/package-diag';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { acceptsGzip, askedEscaping, chooseFormat, type ExpositionChoice } from './content-negotiation';
import { OPENMETRICS_CONTENT_TYPE, renderKey, renderRequest, TEXT_CONTENT_TYPE, type ExpositionFormat, type RenderKey } from './exposition/exposition-text';
import { nameEscapingFor } from './exposition/name-escaping';
import { nextSlice, sliceDue } from './event-loop-slices';
import { SharedRenderings, type SharedRendering } from './shared-rendering';
import { PROTOBUF_CONTENT_TYPE, prefersProtobuf } from './protobuf-negotiation';
import { challenges, isAuthorized, validateScrapeAuth, type ScrapeAuth } from './scrape-auth';

export const DEFAULT_METRICS_PATH = '/metrics';

/** Anything that renders the exposition: an `OmniPrometheusReader`, or a cluster aggregate. */
export interface MetricsTextSource {
  metricsText(format: ExpositionFormat): Promise<string>;
  /** The same as UTF-8 bytes, when the source renders bytes directly (served without re-encoding). */
  metricsBytes?(format: ExpositionFormat): Promise<Buffer>;
  /**
   * Where the source shares its renderings, when it writes the exposition model itself: keyed by
   * format and name escaping (`RenderKey`), so it answers every format and escaping a scraper may
   * ask for, and HTTP scrapes and the source's own `metricsBytes()` join each other's rendering.
   * Other sources get one from the handler, rendering through `metricsBytes` / `metricsText`.
   */
  readonly sharedRenderings?: SharedRenderings<RenderKey>;
  /** Whether a scraper that prefers the Prometheus protobuf exposition gets it now (a source with `sharedRenderings` only). */
  offersProtobuf?(): boolean;
  /** How a scrape's format is picked; default `negotiate`. */
  readonly expositionChoice?: ExpositionChoice;
}

/** Node's request listener shape, plus the optional `next` that express/connect/fastify-middie pass. */
export type MetricsMiddleware = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void;

export interface MetricsHandlerOptions {
  /** Default `/metrics`. */
  readonly path?: string;
  /** Credentials a scrape must present; without them, 401. */
  readonly auth?: ScrapeAuth;
}

/** The renderings of sources that bring none of their own, one set per source (so two handlers on one source share). */
const adoptedRenderings = new WeakMap<MetricsTextSource, SharedRenderings<RenderKey>>();

function renderingsOf(source: MetricsTextSource): SharedRenderings<RenderKey> {
  if (source.sharedRenderings !== undefined) return source.sharedRenderings;
  let renderings = adoptedRenderings.get(source);
  if (renderings === undefined) {
    // Such a source is only ever asked for the text formats, names escaped with underscores.
    renderings = new SharedRenderings(async (key: RenderKey) => {
      const format = renderRequest(key).format as ExpositionFormat;
      return [source.metricsBytes ? await source.metricsBytes(format) : await source.metricsText(format)];
    });
    adoptedRenderings.set(source, renderings);
  }
  return renderings;
}

/**
 * A handler for `GET|HEAD <path>` that serves the source's exposition: OpenMetrics when the
 * scraper's `Accept` prefers it (q-values honoured) and the source negotiates (`expositionChoice`), gzip when `Accept-Encoding` allows it.
 * A GET streams the exposition as it is rendered (chunked, in slices that leave the event loop to
 * the host), and scrapes that arrive while a rendering of the same format and encoding is under
 * way join it (see `SharedRenderings`). A HEAD reads the rendering the same way, counting its bytes
 * as they come instead of sending them, and answers the headers a GET gets with that
 * `Content-Length`, no body: it holds no more than a GET that reads at once, within the same
 * memory budget (`rendering-memory.ts`). A request pipelined behind others on its connection
 * starts (or joins) its rendering only once the responses before it are written and it owns the
 * socket: until then it holds nothing, and its values are as new as its turn. Other methods on the
 * path get 405. Other paths go to `next` when the host's framework provides one (mounted
 * middleware), or 404 on a bare `node:http` server: the host's own server stays in charge of
 * everything else. A request target in absolute form (`GET http://host:9464/metrics`, which
 * HTTP/1.1 servers must accept) is served like its path.
 */
export function createMetricsHandler(source: MetricsTextSource, pathOrOptions: string | MetricsHandlerOptions = {}): MetricsMiddleware {
  const options = typeof pathOrOptions === 'string' ? { path: pathOrOptions } : pathOrOptions;
  const path = options.path ?? DEFAULT_METRICS_PATH;
  validateScrapeAuth(options.auth, 'auth');
  const auth = options.auth;
  const renderings = renderingsOf(source);
  return (request, response, next) => {
    const pathname = requestPath(request.url);
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
    onceOwningSocket(response, () => serve(source, renderings, request, response));
  };
}

/** Runs `turn` once `response` owns its socket: at once, or when the responses pipelined before it are written. */
function onceOwningSocket(response: ServerResponse, turn: () => void): void {
  // Node gives a pipelined request's response the socket ('socket') when the one before it finishes; until then it is null.
  if (response.socket !== null) turn();
  else response.once('socket', turn);
}

/** Answers one GET or HEAD of the exposition, in the format and encoding the request asks for. */
function serve(source: MetricsTextSource, renderings: SharedRenderings<RenderKey>, request: IncomingMessage, response: ServerResponse): void {
  const accept = request.headers.accept;
  const gzipped = acceptsGzip(request.headers['accept-encoding']);
  // `text` answers the 0.0.4 text whatever the scraper asks, protobuf included, as vLLM does.
  const negotiates = source.expositionChoice !== 'text';
  const protobuf = negotiates && prefersProtobuf(accept) && source.sharedRenderings !== undefined && source.offersProtobuf?.() === true;
  const format = protobuf ? 'protobuf' : chooseFormat(source.expositionChoice, accept);
  const type = protobuf ? PROTOBUF_CONTENT_TYPE : format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : TEXT_CONTENT_TYPE;
  // A source that writes the model itself answers the escaping asked for; another prints names escaped with underscores, and says so.
  const asked = askedEscaping(accept, type.slice(0, type.indexOf(';')));
  const answered = source.sharedRenderings === undefined && (asked === 'dots' || asked === 'values') ? 'underscores' : asked;
  const rendering = renderings.rendering(renderKey(format, nameEscapingFor(answered)), gzipped);
  const headers = (): void => {
    response.statusCode = 200;
    response.setHeader('Content-Type', answered === undefined ? type : `${type}; escaping=${answered}`);
    response.setHeader('Vary', 'Accept, Accept-Encoding');
    if (gzipped) response.setHeader('Content-Encoding', 'gzip');
  };
  if (request.method === 'HEAD') countRendering(rendering, response, headers);
  else streamRendering(rendering, response, headers);
}

/**
 * Answers a HEAD: reads the rendering as a streaming reader that takes every chunk as it comes and
 * keeps only its length, then sends the headers with that `Content-Length`. So it holds nothing of
 * its own (the rendering lets go of what every reader took) and counts in the memory budget like a
 * GET; a rendering that fails is answered 500, as a GET that got nothing yet.
 */
function countRendering(rendering: SharedRendering, response: ServerResponse, headers: () => void): void {
  let length = 0;
  const reader = {
    position: 0,
    onChunks: () => {
      while (reader.position < rendering.chunkCount) length += rendering.chunkAt(reader.position++).length;
      rendering.taken();
    },
    drop: () => response.destroy(),
    onEnd: (error?: unknown) => {
      rendering.leave(reader);
      if (response.destroyed) return;
      if (error !== undefined) return failed(response, error);
      headers();
      response.setHeader('Content-Length', length);
      response.end();
    },
  };
  response.once('close', () => rendering.leave(reader));
  rendering.join(reader);
}

/**
 * Writes the rendering's chunks to the response as they come, waiting for `drain` when the client
 * reads slowly and for its slice when the event loop has been busy long enough. A client that
 * falls too far behind is dropped (`rendering-memory.ts`). Headers go out with the first chunk, so a rendering that fails before producing
 * anything is answered 500; one that fails later cuts the response off (the scraper sees a broken
 * transfer, never a truncated exposition that looks whole). A client that goes away leaves the
 * rendering, which stops once nobody reads it.
 */
function streamRendering(rendering: SharedRendering, response: ServerResponse, headers: () => void): void {
  let draining = false;
  let waiting = false;
  let ended = false;
  const pump = (): void => {
    if (draining || waiting || response.destroyed) return;
    // Writing to many sockets at once is work on the event loop too (the kernel copies each chunk): it takes its turn in the slices.
    if (sliceDue()) {
      waiting = true;
      void nextSlice().then(() => {
        waiting = false;
        pump();
      });
      return;
    }
    while (reader.position < rendering.chunkCount) {
      if (!response.headersSent) headers();
      const written = response.write(rendering.chunkAt(reader.position++));
      if (!written) {
        draining = true;
        response.once('drain', () => {
          draining = false;
          pump();
        });
        break;
      }
    }
    rendering.taken();
    if (ended && !draining) {
      if (!response.headersSent) headers();
      response.end();
    }
  };
  const reader = {
    position: 0,
    onChunks: pump,
    // A reader far behind its rendering (one that stopped reading) is cut off: what it has not taken would stay in memory.
    drop: () => response.destroy(),
    onEnd: (error?: unknown) => {
      ended = true;
      if (error === undefined) pump();
      else if (!response.headersSent) failed(response, error);
      else response.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  };
  response.once('close', () => rendering.leave(reader));
  rendering.join(reader);
}

function failed(response: ServerResponse, error: unknown): void {
  // Heard on the console when the application installed no diag logger.
  packageDiag.error('omni-otel-metrics: metrics collection failed', error);
  reply(response, 500, 'metrics collection failed\n');
}

/** The path of a request target: origin form (`/metrics?x`) or absolute form (`http://host/metrics`). */
function requestPath(target = '/'): string {
  if (target.startsWith('/')) return target.split('?', 1)[0] as string;
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}

function reply(response: ServerResponse, status: number, body: string): void {
  response.statusCode = status;
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end(body);
}
