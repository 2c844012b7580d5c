import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/HTTP collector on 127.0.0.1 that refuses every export with 400 (which the exporter does not retry). */
export interface RefusingCollector {
  readonly port: number;
  /** `http://127.0.0.1:<port>/v1/metrics`. */
  readonly url: string;
  /** Export requests received so far. */
  requests(): number;
  close(): Promise<void>;
}

export async function startRefusingCollector(): Promise<RefusingCollector> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests++;
    request.resume();
    request.on('end', () => response.writeHead(400, { 'content-type': 'text/plain' }).end('refused'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/v1/metrics`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
