import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Keep-alive connections to the engines, owned by one puller and destroyed when it stops. */
export class EngineConnections {
  private readonly http = new HttpAgent({ keepAlive: true, maxSockets: 2 });
  private readonly https = new HttpsAgent({ keepAlive: true, maxSockets: 2 });

  /**
   * GETs `url` as Prometheus would scrape it (0.0.4 text, no compression). Resolves with the body,
   * or rejects once `timeoutMillis` has passed, the status is not 200, or the body grows past
   * `maxBytes`; the request is torn down in every failing case.
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
      const fail = (error: Error): void => {
        clearTimeout(timer);
        request.destroy();
        reject(error);
      };
      const timer = setTimeout(() => fail(new Error(`no complete answer within ${timeoutMillis} ms`)), timeoutMillis);
      timer.unref();
      request.on('error', fail);
      request.on('response', (response: IncomingMessage) => {
        if (response.statusCode !== 200) {
          fail(new Error(`HTTP ${String(response.statusCode)}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            fail(new Error(`response larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', fail);
        response.on('aborted', () => fail(new Error('connection closed before the end of the answer')));
        response.on('end', () => {
          clearTimeout(timer);
          resolve(Buffer.concat(chunks).toString('utf8'));
        });
      });
      request.end();
    });
  }

  /** Closes every socket, idle or busy. */
  destroy(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
