import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Knows which of a server's connections are serving a response. Node's `closeIdleConnections()`
 * leaves alone a connection that never carried a request (a client's spare keep-alive socket),
 * which holds `server.close()` until it times out; this closes those too.
 */
export class ConnectionTracker {
  /** Responses in progress per connection. */
  private readonly inFlight = new Map<Socket, number>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.inFlight.set(socket, 0);
      socket.once('close', () => this.inFlight.delete(socket));
    });
    server.on('request', (request, response) => {
      const socket = request.socket;
      this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
      response.once('close', () => {
        const count = this.inFlight.get(socket);
        if (count !== undefined) this.inFlight.set(socket, Math.max(0, count - 1));
      });
    });
  }

  /** Destroys every connection with no response in progress: idle keep-alive or never used. */
  closeIdle(): void {
    for (const [socket, count] of this.inFlight) if (count === 0) socket.destroy();
  }

  /** Destroys every connection, in progress or not (end of the shutdown grace). */
  closeAll(): void {
    for (const socket of this.inFlight.keys()) socket.destroy();
  }
}
