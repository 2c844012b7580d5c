import { registerOmniMetrics } from '../register';
import { IterationStats } from '../instrumentation/stats/iteration-stats';
import { INTER_TOKEN_LATENCY_BUCKETS } from '../views/buckets';
import { compare, summarize, type Measurement } from './measure';

const OBSERVATIONS = 1000;

/**
 * The marginal cost of one inter-token-latency observation on the real path: one stat logger
 * record of an iteration carrying 1000 latencies, minus one carrying none, per latency. The floor
 * is a bare Float64Array histogram observe (binary search over the same bounds).
 */
export async function interTokenLatency(): Promise<{ marginal: Measurement; floor: Measurement }> {
  const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [4, 4, 4], logStats: true, prometheus: false, exporters: [], logIntervalSeconds: 0 });
  const logger = handle.statLogger;
  if (logger === undefined) throw new Error('logStats is on: a stat logger exists');
  const withLatencies = new IterationStats({ iterationTimestamp: 1 });
  for (let i = 0; i < OBSERVATIONS; i++) withLatencies.interTokenLatenciesIter.push(0.005 + (i % 50) * 0.004);
  const without = new IterationStats({ iterationTimestamp: 1 });

  const bounds = Float64Array.from(INTER_TOKEN_LATENCY_BUCKETS);
  const counts = new Float64Array(bounds.length + 1);
  let sum = 0;
  const observe = (value: number): void => {
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (value <= bounds[middle]) high = middle;
      else low = middle + 1;
    }
    counts[low]++;
    sum += value;
  };
  const values = withLatencies.interTokenLatenciesIter;

  const [full, empty, bare] = await compare(
    [
      { name: 'record(iteration with 1000 latencies)', op: () => logger.record(null, withLatencies, 5) },
      { name: 'record(iteration with none)', op: () => logger.record(null, without, 5) },
      { name: 'Float64Array observe ×1000', op: () => values.forEach(observe) },
    ],
    { iterations: 2000, rounds: 9 },
  );
  await handle.shutdown();
  if (full === undefined || empty === undefined || bare === undefined || sum < 0) throw new Error('three contenders measured');
  const marginal = summarize(
    'one inter-token latency on the real path (marginal)',
    full.rounds.map((ns, i) => (ns - (empty.rounds[i] ?? 0)) / OBSERVATIONS),
  );
  const floor = summarize(
    'bare Float64Array histogram observe',
    bare.rounds.map((ns) => ns / OBSERVATIONS),
  );
  return { marginal, floor };
}
