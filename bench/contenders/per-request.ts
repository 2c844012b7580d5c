import { performance } from 'node:perf_hooks';
import { median } from '../measure';
import { setupPerRequest, type PerRequestContender } from '../per-request-setup';
import { contenderMain } from './contender-main';

interface Params {
  readonly contender: PerRequestContender;
  /** Requests per timed block. */
  readonly requests: number;
  readonly blocks: number;
}

/** One per-request contender alone in this process: warm up, then the median of timed blocks. */
contenderMain(async ({ contender, requests, blocks }: Params) => {
  const setup = await setupPerRequest(contender);
  for (let i = 0; i < requests; i++) await setup.run();
  const perRequest: number[] = [];
  for (let block = 0; block < blocks; block++) {
    const start = performance.now();
    for (let i = 0; i < requests; i++) await setup.run();
    perRequest.push(((performance.now() - start) * 1e6) / requests);
  }
  await setup.close();
  return { nsPerRequest: median(perRequest.sort((a, b) => a - b)) };
});
