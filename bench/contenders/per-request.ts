import { performance } from 'node:perf_hooks';
import { PER_REQUEST_WORKLOAD, setupPerRequest, type PerRequestContender } from '../per-request-setup';
import { contenderMain } from './contender-main';

interface Params {
  readonly contender: PerRequestContender;
  /** Requests per timed block. */
  readonly requests: number;
  readonly blocks: number;
  /** Tokens each stage generates per request; default the workload's (100). */
  readonly tokens?: number;
}

/**
 * One per-request contender alone in this process: warm up, then the fastest of the timed blocks.
 * The section subtracts the host's time from each contender's, and the floor's cost is a small
 * part of the host's: the fastest block (the one least disturbed by the machine) keeps that
 * difference above the noise, where a median moved by tens of microseconds between processes.
 */
contenderMain(async ({ contender, requests, blocks, tokens }: Params) => {
  const setup = await setupPerRequest(contender, tokens === undefined ? PER_REQUEST_WORKLOAD : { ...PER_REQUEST_WORKLOAD, tokens });
  for (let i = 0; i < requests; i++) await setup.run();
  let fastest = Infinity;
  for (let block = 0; block < blocks; block++) {
    const start = performance.now();
    for (let i = 0; i < requests; i++) await setup.run();
    fastest = Math.min(fastest, ((performance.now() - start) * 1e6) / requests);
  }
  await setup.close();
  return { nsPerRequest: fastest };
});
