/** The HEAD flood's process (see `HeadFlood`): answers each order with what its HEADs got. */
import { Agent, request } from 'node:http';
import type { HeadFloodOrder, HeadFloodOutcome } from './head-flood';

function head(url: string, agent: Agent): Promise<number | undefined> {
  return new Promise((resolve) => {
    const sent = request(url, { method: 'HEAD', agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200 ? Number(response.headers['content-length']) : undefined));
      response.on('error', () => resolve(undefined));
    });
    sent.on('error', () => resolve(undefined));
    sent.end();
  });
}

process.on('message', (order: HeadFloodOrder) => {
  const agent = new Agent({ keepAlive: true, maxSockets: order.sockets });
  const lengths = new Set<number>();
  let answered = 0;
  let failed = 0;
  const lane = async (): Promise<void> => {
    for (let i = 0; i < order.heads; i++) {
      const length = await head(order.url, agent);
      if (length === undefined) failed++;
      else {
        answered++;
        lengths.add(length);
      }
    }
  };
  void Promise.all(Array.from({ length: order.sockets }, lane)).then(() => {
    agent.destroy();
    const outcome: HeadFloodOutcome = { answered, failed, lengths: [...lengths] };
    process.send?.(outcome);
  });
});
