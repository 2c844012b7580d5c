import { performance } from 'node:perf_hooks';
import { TraceFlags } from '@opentelemetry/api';
import { registerOmniMetrics } from '../../index';
import { monotonicSeconds } from '../../instrumentation/stats/clock';
import { median } from '../measure';
import type { ExemplarContender } from '../exemplar-contenders';
import { contenderMain } from './contender-main';

/** One request's records with exemplars off or on, alone in this process (the contenders: `exemplar-contenders.ts`). */
interface Params {
  readonly contender: ExemplarContender;
  readonly records: number;
  readonly blocks: number;
}

contenderMain(async ({ contender, records, blocks }: Params) => {
  const handle = await registerOmniMetrics({
    modelName: 'm',
    logStats: true,
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    selfCheck: false,
    processMetrics: false,
    exemplars: contender !== 'exemplars-off',
  });
  const pipeline = handle.pipeline;
  // The store's exemplar scope, as the serving observer enters it for a request (none with exemplars off).
  const scope = handle.store.exemplarScope;
  const spanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };
  const traced = contender === 'exemplars-traced' ? spanContext : undefined;
  // Latencies across the e2e buckets, so the records land in different bucket slots.
  const latencies = Array.from({ length: 64 }, (_, i) => 0.05 * 1.1 ** i);
  // As the serving observer records a finished request: it reads the clock for the request's
  // latency (every contender pays that reading) and hands the reading to the exemplars.
  let clockSum = 0;
  const run = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const previous = scope?.enter(traced);
      const now = monotonicSeconds();
      scope?.shareClockReading(now);
      clockSum += now;
      pipeline.requestSucceeded(latencies[i & 63] as number, 'stop');
      scope?.leave(previous);
    }
  };
  run(records); // warm up
  const nsPerRecord: number[] = [];
  for (let block = 0; block < blocks; block++) {
    const start = performance.now();
    run(records);
    nsPerRecord.push(((performance.now() - start) * 1e6) / records);
  }
  await handle.shutdown();
  if (!(clockSum > 0)) throw new Error('the clock was never read');
  return { nsPerRequest: median(nsPerRecord.sort((a, b) => a - b)) };
});
