/**
 * One scenario of every exposition shape (gauges, counters, histograms, an info family; large,
 * fractional and negative values; `_created` times), as a series store of the package's and as the
 * operations the prometheus_client fixture (`test/exporters/fixtures/prometheus_client_render.py`)
 * replays: the parity tests compare the two renderings byte for byte, and a real Prometheus
 * compares what it stores of each.
 */
import assert from 'node:assert/strict';
import { resolveCatalog, type FamilyKey, type ResolvedCatalog } from '../../views/catalog/catalog';
import type { LabelValue } from '../../views/store/family-series';
import { SeriesStore } from '../../views/store/series-store';

/** Real catalog families, one of each shape the exposition has. */
const KEYS: ReadonlySet<FamilyKey> = new Set<FamilyKey>([
  'upstream.numRequestsRunning', // gauge
  'upstream.promptTokens', // counter
  'upstream.requestSuccess', // counter with a label beyond the engine's (finished_reason)
  'upstream.timeToFirstTokenSeconds', // histogram, seconds buckets
  'upstream.iterationTokensTotal', // histogram whose name ends in _total
  'upstream.cacheConfigInfo', // info gauge with extra labels
  'pipeline.transferSize', // histogram, byte buckets (1.048576e+06), `le` sorted between other labels
  'pipeline.imagePixels', // histogram on prometheus_client's default buckets (0.005 … 7.5, 10.0)
  'pipeline.requestsFailed', // counter with a bounded reason label
]);

/**
 * Series creation times, as decimal seconds, one per series in creation order. Our store gets
 * each as milliseconds (`now`), prometheus_client as `float(seconds)` from `time.time()`; both
 * must print the same `_created`. A millisecond double cannot carry every microsecond instant:
 * about a quarter of such times print one unit in the last place away from Python's
 * (`1700000671.111111` prints `1.7000006711111112e+09` here, `1.700000671111111e+09` in Python),
 * so these are times for which the two agree (whole milliseconds always do).
 */
const CREATED = [
  '1700000000.123456',
  '1700000061.250000',
  '1700000122.000001',
  '1700000183.999999',
  '1700000244.500500',
  '1700000305.314159',
  '1700000366.271828',
  '1700000427.000000',
  '1700000488.123000',
  '1700000549.987654',
  '1700000610.654321',
  '1700000793.333333',
  '1700000976.666666',
  '1700001098.888888',
  '1700001159.010203',
  '1700001220.405060',
  '1700001281.708090',
  '1700001342.135791',
  '1700001403.246802',
  '1700001464.999000',
  '1700001525.000999',
  '1700001586.424242',
  '1700001647.171717',
  '1700001769.909090',
];

/** `1700000000.123456` (seconds) → 1700000000123.456 (milliseconds), by moving the point in the text. */
export function millisOf(seconds: string): number {
  const [whole, fraction = ''] = seconds.split('.');
  const digits = fraction.padEnd(3, '0');
  return Number(`${whole}${digits.slice(0, 3)}.${digits.slice(3) || '0'}`);
}

interface Operation {
  readonly family: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly op: 'create' | 'record';
  readonly value?: number;
}

interface PythonFamily {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labelnames: readonly string[];
  readonly buckets?: readonly number[];
}

export interface PythonScenario {
  readonly families: readonly PythonFamily[];
  readonly operations: readonly Operation[];
  readonly created: readonly string[];
}

export const M = 'Qwen/Qwen3-Omni';
/** Extra labels of the info family; the second set needs escaping (quote, backslash, newline) and is not ASCII. */
const CACHE_CONFIG = [
  { block_size: '16', cache_dtype: 'auto', gpu_memory_utilization: '0.9' },
  { block_size: '32', cache_dtype: 'fp8 "e4m3" \\ ü\nx', gpu_memory_utilization: '0.85' },
];

/**
 * A store over the selected families (catalog order) and the same scenario written down for
 * prometheus_client: every series created and every value recorded, in the same order.
 */
export function scenario(): { store: SeriesStore; python: PythonScenario } {
  const full = resolveCatalog({ logStats: true });
  const families = full.families.filter((family) => KEYS.has(family.key));
  assert.deepEqual(new Set(families.map((family) => family.key)), KEYS, 'every selected family is in the catalog');
  const catalog: ResolvedCatalog = {
    prefix: full.prefix,
    families,
    byKey: (key) => families.find((family) => family.key === key),
    byName: (name) => families.find((family) => family.name === name),
  };

  let issued = 0;
  const store = new SeriesStore(catalog, {
    modelName: M,
    now: () => {
      const seconds = CREATED[issued++];
      assert.ok(seconds !== undefined, 'more series than CREATED times');
      return millisOf(seconds);
    },
  });

  const operations: Operation[] = [];
  const created: string[] = [];
  const bind = (key: FamilyKey, values: readonly LabelValue[], extra?: Readonly<Record<string, string>>) => {
    const family = store.family(key);
    assert.ok(family, key);
    const before = family.series.length;
    const series = store.bind(key, values, extra);
    const labels: Record<string, string> = { ...extra };
    family.family.labels.forEach((name, i) => {
      labels[name] = String(values[i]);
    });
    if (family.series.length > before) {
      // The store read its clock for this series; prometheus_client reads it for counter and histogram children only.
      if (family.family.type !== 'gauge') created.push(CREATED[issued - 1] as string);
      operations.push({ family: family.family.name, labels, op: 'create' });
    }
    return (value: number) => {
      series.record(value);
      operations.push({ family: family.family.name, labels, op: 'record', value });
    };
  };

  // Series first, in vLLM's per-engine order, some left at zero.
  for (const [i, [stage, replica]] of [
    ['0', '0'],
    ['1', '1'],
  ].entries()) {
    bind('upstream.numRequestsRunning', [M, stage, replica]);
    bind('upstream.promptTokens', [M, stage, replica]);
    for (const reason of ['stop', 'length', 'abort']) bind('upstream.requestSuccess', [M, stage, replica, reason]);
    bind('upstream.timeToFirstTokenSeconds', [M, stage, replica]);
    bind('upstream.iterationTokensTotal', [M, stage, replica]);
    bind('upstream.cacheConfigInfo', [stage, replica], CACHE_CONFIG[i])(1);
  }

  bind('upstream.numRequestsRunning', [M, '0', '0'])(3);
  bind('upstream.numRequestsRunning', [M, '0', '0'])(1234567.5);
  bind('upstream.numRequestsRunning', [M, '1', '1'])(-3);
  bind('upstream.numRequestsRunning', [M, '1', '1'])(0.75);

  const prompt = bind('upstream.promptTokens', [M, '0', '0']);
  for (const value of [1e6, 2.5e7, 1e12, 0.5]) prompt(value);
  const fractions = bind('upstream.promptTokens', [M, '1', '1']);
  for (const value of [0.1, 0.2]) fractions(value); // 0.30000000000000004
  bind('upstream.requestSuccess', [M, '0', '0', 'stop'])(1e6);
  bind('upstream.requestSuccess', [M, '1', '1', 'length'])(1);
  bind('upstream.requestSuccess', [M, '1', '1', 'length'])(1);
  bind('upstream.requestSuccess', [M, '1', '1', 'abort'])(0); // a zero increment changes nothing, in both

  // On bounds (0.001, 0.04, 0.1, 2560), above the last bound, zero, negative; the sum stays positive.
  const ttft = bind('upstream.timeToFirstTokenSeconds', [M, '1', '1']);
  for (const value of [0.1, 0.3, -0.5, 0, 0.04, 5000, 2560, 0.001]) ttft(value);

  const iteration = bind('upstream.iterationTokensTotal', [M, '0', '0']);
  for (const value of [1, 7, 8, 9, 16384, 20000]) iteration(value);

  const transfer = bind('pipeline.transferSize', [M, '0', '0', '1', '1']);
  for (const value of [512, 4096, 1048576, 3e6, 268435457]) transfer(value);
  bind('pipeline.transferSize', [M, '0', '1', '1', '0']); // never observed
  const balanced = bind('pipeline.transferSize', [M, '1', '0', '2', '0']);
  for (const value of [-1, 1]) balanced(value); // sum 0.0: OpenMetrics keeps _count and _sum

  const python: PythonScenario = {
    families: families.map((family) => ({
      name: family.name,
      type: family.type,
      help: family.help,
      // Declared in the catalog's order: prometheus_client sorts label names when it prints (`le` included), as we do.
      labelnames: family.info ? [...family.labels, ...Object.keys(CACHE_CONFIG[0] ?? {})] : family.labels,
      buckets: family.buckets,
    })),
    operations,
    created,
  };
  return { store, python };
}

/** A histogram series whose sum is negative, added to a scenario (see the OpenMetrics exception below). */
export function withNegativeSum(): ReturnType<typeof scenario> {
  const { store, python } = scenario();
  const labels = { model_name: M, stage: '0', replica: '0' };
  const series = store.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']); // created above, still empty
  const operations = [...python.operations];
  for (const value of [-0.5, -0.25]) {
    series.record(value);
    operations.push({ family: 'vllm:time_to_first_token_seconds', labels, op: 'record', value });
  }
  return { store, python: { ...python, operations } };
}
