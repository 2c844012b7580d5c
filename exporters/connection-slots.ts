import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { LimitedWarning } from '../views/common/diag-warnings';

/**
 * A response whose client has taken nothing for this long (its socket full, waiting for a drain)
 * may lose its slot to a new connection when every slot is taken. A scraper reading over any
 * working network drains a socket buffer within milliseconds.
 */
export const STALLED_READER_MILLIS = 1000;

export interface ConnectionSlotsOptions {
  /** Connections open at once. */
  readonly maxConnections: number;
  /** From connecting (TLS handshake included) to the first request's last header. */
  readonly firstRequestTimeoutMillis: number;
  /** The server speaks TLS: requests arrive on the TLS socket, not on the TCP socket `connection` gives. */
  readonly secure: boolean;
  /** From a request's arrival to its response's last byte written; a response still unwritten is cut off. */
  readonly writeTimeoutMillis: number;
}

/** One TCP connection: whether it ever sent a whole request, and which of its requests are being answered. */
interface Connection {
  readonly socket: Socket;
  readonly key: string;
  requests: number;
  /**
   * Its responses not finished yet, each with its write deadline (none yet for one pipelined behind
   * another). A pipelined response that never got the socket is never told its connection closed:
   * the connection's close ends them all.
   */
  readonly responding: Map<ServerResponse, NodeJS.Timeout | undefined>;
  deadline: NodeJS.Timeout | undefined;
  /** The socket requests arrive on (the TLS socket, with TLS), once one did. */
  requestSocket: Socket | undefined;
  /** When its client last took what was written (a drain), or its latest request arrived (`performance.now()`). */
  progressAt: number;
}

/**
 * The connection slots of the metrics server, kept so that clients that send nothing useful cannot
 * lock scrapers out:
 *
 * - A connection must have sent its first request's headers within `firstRequestTimeoutMillis` of
 *   connecting, TLS handshake included, or it is closed: a per-socket timer, exact, where Node's own
 *   `headersTimeout` is only checked every `connectionsCheckingInterval` and does not start until a
 *   TLS handshake has finished.
 * - At `maxConnections`, a new connection takes the slot of the oldest connection that has not yet
 *   sent a whole request (a silent socket, headers trickling in, a TLS handshake never finished), else
 *   of the oldest idle keep-alive connection; it is refused only when every connection is being
 *   answered. A flood of slow clients therefore delays a scraper by nothing: to keep it out, a flood
 *   must open `maxConnections` new connections between the scraper's connect and its request.
 *   Per-address limits are not used: Prometheus servers behind one NAT, or a sidecar on loopback,
 *   share an address with whoever floods.
 * - When every connection is being answered, a new one takes the slot of the connection whose
 *   client has taken nothing of its response for the longest, `STALLED_READER_MILLIS` at least (a
 *   client that sent `GET /metrics` and stopped reading): readers that never read cannot lock
 *   scrapers out either.
 * - A response must be written within `writeTimeoutMillis` of its request (of its turn, for a
 *   request pipelined behind others), or its connection is closed: a client that reads a byte now
 *   and then cannot hold its slot for longer.
 */
export class ConnectionSlots {
  private readonly connections = new Map<Socket, Connection>();
  /** The connection each request-bearing socket belongs to (the TLS socket, with TLS). */
  private readonly bySocket = new WeakMap<Socket, Connection>();
  private readonly byAddress = new Map<string, Connection>();
  private readonly evictions = new LimitedWarning();
  private readonly lateResponses = new LimitedWarning();
  private respondingCount = 0;
  /** Told each time the last response being written finishes. */
  private allAnswered: (() => void) | undefined;

  constructor(
    server: Server,
    private readonly options: ConnectionSlotsOptions,
  ) {
    server.on('connection', (socket: Socket) => this.admit(socket));
    if (options.secure) server.on('secureConnection', (socket: TLSSocket) => this.secured(socket));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => this.requested(request, response));
  }

  /** Closes every connection at once (server shutdown). */
  destroyAll(): void {
    for (const socket of this.connections.keys()) socket.destroy();
  }

  /** Responses being written (or waiting their turn behind another on their connection). */
  get responding(): number {
    return this.respondingCount;
  }

  /** Calls `callback` whenever the last response being written finishes. */
  onAllAnswered(callback: () => void): void {
    this.allAnswered = callback;
  }

  private admit(socket: Socket): void {
    if (this.connections.size >= this.options.maxConnections && !this.evictFor(socket)) {
      socket.destroy();
      return;
    }
    const key = addressKey(socket);
    const connection: Connection = { socket, key, requests: 0, responding: new Map(), deadline: undefined, requestSocket: undefined, progressAt: 0 };
    connection.deadline = setTimeout(() => socket.destroy(), this.options.firstRequestTimeoutMillis).unref();
    this.connections.set(socket, connection);
    this.bySocket.set(socket, connection);
    if (this.options.secure) this.byAddress.set(key, connection);
    socket.once('close', () => {
      clearTimeout(connection.deadline);
      this.connections.delete(socket);
      if (this.byAddress.get(key) === connection) this.byAddress.delete(key);
      for (const response of [...connection.responding.keys()]) this.answered(connection, response);
    });
  }

  /** The TLS socket of a finished handshake, matched to its TCP connection by the peer's address and port. */
  private secured(socket: TLSSocket): void {
    const connection = this.byAddress.get(addressKey(socket));
    if (connection === undefined) return;
    this.byAddress.delete(connection.key);
    this.bySocket.set(socket, connection);
  }

  private requested(request: IncomingMessage, response: ServerResponse): void {
    const connection = this.bySocket.get(request.socket);
    if (connection === undefined) return;
    connection.requests++;
    connection.responding.set(response, undefined);
    this.respondingCount++;
    connection.progressAt = performance.now();
    clearTimeout(connection.deadline);
    if (connection.requestSocket === undefined) {
      connection.requestSocket = request.socket;
      request.socket.on('drain', () => (connection.progressAt = performance.now()));
    }
    // A request pipelined behind others gets its time once the responses before it are written and it owns the socket.
    const startDeadline = (): void => {
      if (!connection.responding.has(response)) return;
      const deadline = setTimeout(() => {
        this.lateResponses.warn(
          `closed a /metrics connection (from ${request.socket.remoteAddress ?? 'an unknown address'}) whose response was not written within prometheus.writeTimeoutMillis (${this.options.writeTimeoutMillis} ms)`,
        );
        response.destroy();
      }, this.options.writeTimeoutMillis).unref();
      connection.responding.set(response, deadline);
    };
    if (response.socket !== null) startDeadline();
    else response.once('socket', startDeadline);
    response.once('close', () => this.answered(connection, response));
  }

  /** `response` of `connection` is finished (or its connection closed). */
  private answered(connection: Connection, response: ServerResponse): void {
    if (!connection.responding.has(response)) return;
    clearTimeout(connection.responding.get(response));
    connection.responding.delete(response);
    if (--this.respondingCount === 0) this.allAnswered?.();
  }

  /** Closes the connection whose slot `newcomer` takes; false when every connection is being answered. */
  private evictFor(newcomer: Socket): boolean {
    let idle: Connection | undefined;
    let stalled: Connection | undefined;
    let victim: Connection | undefined;
    const stalledBefore = performance.now() - STALLED_READER_MILLIS;
    // Map order is connection order: the first match is the oldest.
    for (const connection of this.connections.values()) {
      if (connection.requests === 0) {
        victim = connection;
        break;
      }
      if (connection.responding.size === 0) idle ??= connection;
      else if (connection.requestSocket?.writableNeedDrain === true && connection.progressAt <= stalledBefore) {
        if (stalled === undefined || connection.progressAt < stalled.progressAt) stalled = connection;
      }
    }
    victim ??= idle ?? stalled;
    const from = newcomer.remoteAddress ?? 'an unknown address';
    if (victim === undefined) {
      this.evictions.warn(
        `the /metrics server is at prometheus.maxConnections (${this.options.maxConnections}), every connection being answered to a client that reads: refused a connection from ${from}`,
      );
      return false;
    }
    const which =
      victim.requests === 0
        ? 'the oldest connection that had not sent a request'
        : victim === idle
          ? 'the oldest connection idle between requests'
          : 'the connection whose client had read nothing for the longest';
    this.evictions.warn(
      `the /metrics server is at prometheus.maxConnections (${this.options.maxConnections}): closed ${which} (from ${victim.socket.remoteAddress ?? 'an unknown address'}) to admit one from ${from}`,
    );
    victim.socket.destroy();
    // The close event that removes it from the map comes later; the slot is free now.
    clearTimeout(victim.deadline);
    this.connections.delete(victim.socket);
    return true;
  }
}

function addressKey(socket: Socket): string {
  return `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
}
