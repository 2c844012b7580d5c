import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerOmniMetrics } from '../../index';
import { TIME_TO_FIRST_TOKEN_BUCKETS } from '../../views/catalog/buckets';
import { collectGarbage, contenderMain } from './contender-main';

export const MEMORY_KINDS = ['counter', 'gauge', 'histogram'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

interface Params {
  readonly contender: 'ours' | 'prom-client';
  readonly kind: MemoryKind;
  readonly series: number;
}

/** The family of each kind, with the labels every engine series carries. */
const FAMILY_KEYS = { counter: 'upstream.promptTokens', gauge: 'upstream.numRequestsRunning', histogram: 'upstream.timeToFirstTokenSeconds' } as const;

/**
 * Heap (and typed-array storage, which lives outside it) per series created and populated, after
 * full collections, over the same before the series existed. Runs with `--expose-gc`.
 */
contenderMain(async ({ contender, kind, series }: Params) => {
  let create: () => unknown;
  if (contender === 'ours') {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      selfCheck: false,
      cardinalityLimit: series + 1,
    });
    create = () => {
      for (let i = 0; i < series; i++) handle.store.bind(FAMILY_KEYS[kind], ['m', String(i % 3), String(i)]).record(kind === 'histogram' ? 0.2 : 1);
      return handle;
    };
  } else {
    create = () => {
      const common = { name: `x_${kind}`, help: 'x', labelNames: ['model_name', 'stage', 'replica'], registers: [new Registry()] };
      const metric =
        kind === 'counter'
          ? new Counter(common)
          : kind === 'gauge'
            ? new Gauge(common)
            : new Histogram({ ...common, buckets: [...TIME_TO_FIRST_TOKEN_BUCKETS] });
      for (let i = 0; i < series; i++) {
        const labels = { model_name: 'm', stage: String(i % 3), replica: String(i) };
        if (metric instanceof Counter) metric.labels(labels).inc(1);
        else if (metric instanceof Gauge) metric.labels(labels).set(1);
        else metric.labels(labels).observe(0.2);
      }
      return metric;
    };
  }
  collectGarbage();
  const before = heapAndBuffers();
  const kept = create();
  collectGarbage();
  const after = heapAndBuffers();
  return { bytesPerSeries: (after - before) / series, kept: kept === undefined ? 0 : 1 };
});

function heapAndBuffers(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}
