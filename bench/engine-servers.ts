import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EngineTarget } from '../index';
import { dataParallelEngineText } from './engine-text';

export interface EngineServers {
  /** One target per (stage, replica), spread over the servers' engines. */
  readonly targets: readonly EngineTarget[];
  close(): Promise<void>;
}

/**
 * `servers` stand-in data-parallel vLLM servers on 127.0.0.1 (ephemeral ports), together carrying
 * one engine per (stage, replica) of `pools`; each serves its text from one prepared buffer.
 */
export async function startEngineServers(servers: number, pools: readonly number[], modelName: string): Promise<EngineServers> {
  const replicas = pools.flatMap((count, stage) => Array.from({ length: count }, (_, replica) => ({ stage, replica })));
  const perServer = Math.ceil(replicas.length / servers);
  const started: Server[] = [];
  const targets: EngineTarget[] = [];
  for (let s = 0; s < servers; s++) {
    const body = Buffer.from(dataParallelEngineText(0, perServer, modelName), 'utf8');
    const server = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    started.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    replicas.slice(s * perServer, (s + 1) * perServer).forEach(({ stage, replica }, engine) => targets.push({ stage, replica, url, engine }));
  }
  return {
    targets,
    close: async () => {
      for (const server of started) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
