import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A committed fixture (written by `fixtures/generate-fixtures.py` with prometheus_client). */
export function fixtureText(name: 'vllm-v0.10-engine0.prom' | 'vllm-current-engine0.prom' | 'vllm-current-dp2.prom'): string {
  return readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8');
}

/**
 * A stand-in vLLM server on 127.0.0.1 (ephemeral port) serving `/metrics` as prometheus_client
 * does. It can go down (closed, connections cut) and come back on the same port, or hang.
 */
export class EngineServer {
  requests = 0;
  /** Answer nothing (the socket stays open): a hung engine. */
  hang = false;
  /** What the engine says it serves, whatever the request's Accept header asks for. */
  contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private server: Server | undefined;
  private portNumber = 0;

  private constructor(public text: string) {}

  static async start(text: string): Promise<EngineServer> {
    const engine = new EngineServer(text);
    await engine.listen(0);
    return engine;
  }

  get url(): string {
    return `http://127.0.0.1:${this.portNumber}/metrics`;
  }

  /** Closes the server and cuts its connections, as an engine that died. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  up(): Promise<void> {
    return this.listen(this.portNumber);
  }

  private listen(port: number): Promise<void> {
    const server = createServer((request, response) => {
      this.requests++;
      if (this.hang) return;
      if (request.url !== '/metrics') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': this.contentType });
      response.end(this.text);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        this.portNumber = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }
}
