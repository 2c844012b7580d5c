import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';

/**
 * Why a pull of an engine failed: `reason` is the kind of failure, from a small set (`timeout`,
 * `HTTP 503`, `ECONNREFUSED`, `too large`, `cut off`, `closed`, `unparsable`, `too slow to parse`),
 * so a warning can be said once per engine and reason; the message says the rest.
 */
export class EnginePullError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'EnginePullError';
  }
}

/** Keep-alive connections to the engines, owned by one puller and destroyed when it stops. */
export class EngineConnections {
  private readonly http = new HttpAgent({ keepAlive: true, maxSockets: 2 });
  private readonly https = new HttpsAgent({ keepAlive: true, maxSockets: 2 });
  /** Every request not settled yet, by the function that fails it. */
  private readonly pending = new Set<(error: EnginePullError) => void>();
  private destroyed = false;

  constructor() {
    this.refuseConnectionsOnceDestroyed(this.http);
    this.refuseConnectionsOnceDestroyed(this.https);
  }

  /**
   * GETs `url` as Prometheus would scrape it (0.0.4 text, no compression). Resolves with the body,
   * or rejects with an `EnginePullError` once `timeoutMillis` has passed, the status is not 200, or
   * the body grows past `maxBytes`; the request is torn down in every failing case.
   */
  get(url: URL, timeoutMillis: number, maxBytes: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const https = url.protocol === 'https:';
      const request = (https ? httpsRequest : httpRequest)(url, {
        method: 'GET',
        agent: https ? this.https : this.http,
        headers: { accept: 'text/plain;version=0.0.4;q=1,*/*;q=0.1', 'accept-encoding': 'identity', 'user-agent': 'omni-otel-metrics engine-pull' },
      });
      // Settling twice is harmless: whichever of timeout, error or end comes first decides.
      const fail = (error: EnginePullError): void => {
        clearTimeout(timer);
        this.pending.delete(fail);
        request.destroy();
        reject(error);
      };
      this.pending.add(fail);
      const timer = setTimeout(() => fail(new EnginePullError(`no complete answer within ${timeoutMillis} ms`, 'timeout')), timeoutMillis);
      timer.unref();
      const networkError = (error: NodeJS.ErrnoException): void => fail(new EnginePullError(error.message, error.code ?? 'network error'));
      request.on('error', networkError);
      request.on('response', (response: IncomingMessage) => {
        if (response.statusCode !== 200) {
          fail(new EnginePullError(`HTTP ${String(response.statusCode)}`, `HTTP ${String(response.statusCode)}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            fail(new EnginePullError(`response larger than ${maxBytes} bytes`, 'too large'));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', networkError);
        response.on('aborted', () => fail(new EnginePullError('connection closed before the end of the answer', 'cut off')));
        response.on('end', () => {
          clearTimeout(timer);
          this.pending.delete(fail);
          resolve(Buffer.concat(chunks).toString('utf8'));
        });
      });
      request.end();
    });
  }

  /**
   * Closes every socket, idle or busy, and opens no new one. Requests not answered yet fail now:
   * one still queued for a socket would otherwise keep its timeout timer until it fires.
   */
  destroy(): void {
    this.destroyed = true;
    for (const fail of [...this.pending]) fail(new EnginePullError('engine connections closed', 'closed'));
    this.http.destroy();
    this.https.destroy();
  }

  /**
   * A request queued behind `maxSockets` (several URLs on one host and port) is given a new
   * connection by the agent as soon as a busy socket closes, which destroy() does: after shutdown
   * it would still reach the engine, and its socket would stay open until the answer or the
   * timeout, or for minutes in connect against a host that drops packets, holding the event loop.
   * Once destroyed, the agent opens nothing and such a request fails at once.
   */
  private refuseConnectionsOnceDestroyed(agent: HttpAgent): void {
    const open = agent.createConnection.bind(agent);
    agent.createConnection = (options, callback) => {
      if (!this.destroyed) return open(options, callback);
      callback?.(new Error('engine connections closed'), undefined as unknown as Duplex);
      return undefined;
    };
  }
}
