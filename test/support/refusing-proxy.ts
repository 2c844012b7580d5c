/**
 * A loopback HTTP proxy in front of a real receiver that refuses the requests it is told to refuse:
 * a real Collector cannot be made to answer 429 or 503 on demand, this stands in for one that does.
 * Each queued refusal answers one request (whatever it carries) with its status and `Retry-After`;
 * every other request is forwarded as it came and the receiver's answer relayed. Every request is
 * logged with the status it got and when it arrived.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Refusal {
  readonly status: 429 | 503;
  /** The `Retry-After` header, as sent. */
  readonly retryAfter: string;
}

export interface ProxiedRequest {
  /** When the request's body had arrived, in `performance.now()` milliseconds. */
  readonly at: number;
  /** The status it was answered with: a refusal's, or the receiver's. */
  readonly status: number;
}

export interface RefusingProxy {
  /** `http://127.0.0.1:<port>`: the receiver's base, to which request paths are appended. */
  readonly url: string;
  /** Every request so far, in order of arrival. */
  readonly requests: readonly ProxiedRequest[];
  /** Queues refusals for the next requests, in order. */
  refuse(...refusals: Refusal[]): void;
  close(): Promise<void>;
}

/** Starts the proxy on an ephemeral port of 127.0.0.1, in front of `target` (`http://host:port`). */
export async function startRefusingProxy(target: string): Promise<RefusingProxy> {
  const upstream = new URL(target);
  const queue: Refusal[] = [];
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      const refusal = queue.shift();
      if (refusal !== undefined) {
        requests.push({ at, status: refusal.status });
        response.writeHead(refusal.status, { 'Retry-After': refusal.retryAfter, 'Content-Type': 'text/plain' }).end('refused by the test proxy');
        return;
      }
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers },
        (answer) => {
          requests.push({ at, status: answer.statusCode ?? 0 });
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forward.on('error', (error) => {
        requests.push({ at, status: 502 });
        response.writeHead(502).end(String(error));
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    refuse: (...refusals) => void queue.push(...refusals),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
