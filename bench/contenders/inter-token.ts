import { performance } from 'node:perf_hooks';
import { Histogram, Registry } from 'prom-client';
import { registerOmniMetrics } from '../../index';
import { INTER_TOKEN_LATENCY_BUCKETS } from '../../views/catalog/buckets';
import { floatCells } from '../direct-path/float-cells';
import { median } from '../measure';
import { contenderMain } from './contender-main';

export const INTER_TOKEN_CONTENDERS = ['ours', 'prom-client', 'floor'] as const;

interface Params {
  readonly contender: (typeof INTER_TOKEN_CONTENDERS)[number];
  readonly observations: number;
  readonly blocks: number;
}

/** Inter-token latencies spread over the buckets, as a decode loop produces them. */
const VALUES = Float64Array.from({ length: 1024 }, (_, i) => 0.005 + (i % 50) * 0.004);

/**
 * One inter-token-latency observation into one bound series: the package's store series, a
 * prom-client child, or a Float64Array histogram (the floor). One observe against one observe.
 */
contenderMain(async ({ contender, observations, blocks }: Params) => {
  const labels = { model_name: 'm', stage: '0', replica: '0' };
  let observe: (value: number) => void;
  let close = (): Promise<void> => Promise.resolve();
  if (contender === 'ours') {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      selfCheck: false,
    });
    const series = handle.store.bind('upstream.interTokenLatencySeconds', ['m', '0', '0']);
    observe = (value) => series.record(value);
    close = () => handle.shutdown();
  } else if (contender === 'prom-client') {
    const histogram = new Histogram({
      name: 'itl',
      help: 'itl',
      labelNames: Object.keys(labels),
      buckets: [...INTER_TOKEN_LATENCY_BUCKETS],
      registers: [new Registry()],
    });
    const child = histogram.labels(labels);
    observe = (value) => child.observe(value);
  } else {
    const cell = floatCells().histogram('itl', labels, INTER_TOKEN_LATENCY_BUCKETS);
    observe = (value) => cell.observe(value);
  }
  const run = (): number => {
    const start = performance.now();
    for (let i = 0; i < observations; i++) observe(VALUES[i & 1023] as number);
    return ((performance.now() - start) * 1e6) / observations;
  };
  run();
  const perObservation = Array.from({ length: blocks }, run).sort((a, b) => a - b);
  await close();
  return { nsPerObservation: median(perObservation) };
});
