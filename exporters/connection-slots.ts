import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { LimitedWarning } from '../views/diag-warnings';

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

/** One TCP connection: whether it ever sent a whole request, and how many of its requests are being answered. */
interface Connection {
  readonly socket: Socket;
  readonly key: string;
  requests: number;
  responding: number;
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
 * - A response must be written within `writeTimeoutMillis` of its request, or its connection is
 *   closed: a client that reads a byte now and then cannot hold its slot for longer.
 */
export class ConnectionSlots {
  private readonly connections = new Map<Socket, Connection>();
  /** The connection each request-bearing socket belongs to (the TLS socket, with TLS). */
  private readonly bySocket = new WeakMap<Socket, Connection>();
  private readonly byAddress = new Map<string, Connection>();
  private readonly evictions = new LimitedWarning();
  private readonly lateResponses = new LimitedWarning();

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

  private admit(socket: Socket): void {
    if (this.connections.size >= this.options.maxConnections && !this.evictFor(socket)) {
      socket.destroy();
      return;
    }
    const key = addressKey(socket);
    const connection: Connection = { socket, key, requests: 0, responding: 0, deadline: undefined, requestSocket: undefined, progressAt: 0 };
    connection.deadline = setTimeout(() => socket.destroy(), this.options.firstRequestTimeoutMillis).unref();
    this.connections.set(socket, connection);
    this.bySocket.set(socket, connection);
    if (this.options.secure) this.byAddress.set(key, connection);
    socket.once('close', () => {
      clearTimeout(connection.deadline);
      this.connections.delete(socket);
      if (this.byAddress.get(key) === connection) this.byAddress.delete(key);
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
    connection.responding++;
    connection.progressAt = performance.now();
    clearTimeout(connection.deadline);
    if (connection.requestSocket === undefined) {
      connection.requestSocket = request.socket;
      request.socket.on('drain', () => (connection.progressAt = performance.now()));
    }
    const writeDeadline = setTimeout(() => {
      this.lateResponses.warn(
        `closed a /metrics connection (from ${request.socket.remoteAddress ?? 'an unknown address'}) whose response was not written within prometheus.writeTimeoutMillis (${this.options.writeTimeoutMillis} ms)`,
      );
      response.destroy();
    }, this.options.writeTimeoutMillis).unref();
    response.once('close', () => {
      clearTimeout(writeDeadline);
      connection.responding--;
    });
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
      if (connection.responding === 0) idle ??= connection;
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
