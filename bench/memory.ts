import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Histogram, Registry } from 'prom-client';
import { resolveCatalog } from '../views/catalog';
import { SeriesStore } from '../views/store/series-store';

const SERIES = 20_000;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

export interface MemoryResult {
  /** Bytes of heap per populated histogram series. */
  readonly ours: number;
  readonly promClient: number;
}

/**
 * Heap per populated histogram series (time-to-first-token bounds, 22 buckets, one observation
 * each), ours against prom-client holding the same series: heap (and typed-array storage, which
 * lives outside it) after a full collection with the series alive, minus the same before they
 * were created, divided by their number.
 */
export function memoryPerSeries(): MemoryResult {
  const ours = heapPer(() => {
    const catalog = resolveCatalog({ logStats: true });
    const store = new SeriesStore(catalog, { modelName: 'm', cardinalityLimit: SERIES + 1 });
    const family = store.family('upstream.timeToFirstTokenSeconds');
    if (family === undefined) throw new Error('the TTFT family is registered with logStats');
    for (let i = 0; i < SERIES; i++) family.bind(['m', String(i % 3), String(i)]).record(0.2);
    return store;
  });
  const promClient = heapPer(() => {
    const registry = new Registry();
    const catalog = resolveCatalog({ logStats: true });
    const ttft = catalog.byKey('upstream.timeToFirstTokenSeconds');
    const histogram = new Histogram({
      name: 'vllm:time_to_first_token_seconds',
      help: ttft?.help ?? '',
      labelNames: ['model_name', 'replica', 'stage'],
      buckets: [...(ttft?.buckets ?? [])],
      registers: [registry],
    });
    for (let i = 0; i < SERIES; i++) histogram.labels({ model_name: 'm', stage: String(i % 3), replica: String(i) }).observe(0.2);
    return registry;
  });
  return { ours, promClient };
}

function heapPer(create: () => unknown): number {
  collectGarbage();
  collectGarbage();
  const before = heapAndBuffers();
  const kept = create();
  collectGarbage();
  collectGarbage();
  const after = heapAndBuffers();
  if (kept === undefined) throw new Error('the series stay alive while measured');
  return (after - before) / SERIES;
}

function heapAndBuffers(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}
