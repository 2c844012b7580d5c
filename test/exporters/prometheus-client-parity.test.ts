import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Attributes } from '@opentelemetry/api';
import { renderStore } from '../../exporters/store-exposition';
import { resolveCatalog, type FamilyKey, type ResolvedCatalog } from '../../views/catalog';
import type { LabelValue } from '../../views/store/family-series';
import { SeriesStore } from '../../views/store/series-store';

/** Debian's python3-prometheus-client: the library vLLM prints its `/metrics` with. */
const PYTHON = '/usr/bin/python3';
const RENDER = join(__dirname, 'fixtures', 'prometheus_client_render.py');

const KEYS: readonly FamilyKey[] = [
  'upstream.numRequestsRunning',
  'upstream.promptTokens',
  'upstream.requestSuccess',
  'upstream.timeToFirstTokenSeconds',
  'upstream.iterationTokensTotal',
  'upstream.cacheConfigInfo',
  'pipeline.transferSize',
];

interface Operation {
  readonly family: string;
  readonly labels: readonly string[];
  readonly op: 'create' | 'record';
  readonly value?: number;
}

/** A store over a few real catalog families, and the same scenario written down for prometheus_client. */
function scenario() {
  const full = resolveCatalog({ logStats: true });
  const families = KEYS.map((key) => full.byKey(key)).filter((family) => family !== undefined);
  const catalog: ResolvedCatalog = { prefix: full.prefix, families, byKey: (key) => full.byKey(key), byName: (name) => full.byName(name) };
  let next = 1_700_000_000_123.456;
  const store = new SeriesStore(catalog, { modelName: 'Qwen/Qwen3-Omni', now: () => (next += 1000.25) });
  const operations: Operation[] = [];
  const created: number[] = [];
  const bind = (key: FamilyKey, values: readonly LabelValue[], extra?: Record<string, string>) => {
    const family = store.family(key);
    assert.ok(family);
    const before = family.series.length;
    const series = store.bind(key, values, extra as Attributes | undefined);
    const labels = [...values.map(String), ...Object.values(extra ?? {})];
    if (family.series.length > before) {
      // prometheus_client reads the clock for the children of counters and histograms only.
      const time = family.series.at(-1)?.createdTime ?? [0, 0];
      if (family.family.type !== 'gauge') created.push(time[0] + time[1] / 1e9);
      operations.push({ family: family.family.name, labels, op: 'create' });
    }
    return (value: number) => {
      series.record(value);
      operations.push({ family: family.family.name, labels, op: 'record', value });
    };
  };
  const m = 'Qwen/Qwen3-Omni';
  for (const [stage, replica] of [['0', '0'], ['1', '1']]) {
    bind('upstream.numRequestsRunning', [m, stage, replica]);
    bind('upstream.promptTokens', [m, stage, replica]);
    for (const reason of ['stop', 'length', 'abort']) bind('upstream.requestSuccess', [m, stage, replica, reason]);
    bind('upstream.timeToFirstTokenSeconds', [m, stage, replica]);
    bind('upstream.iterationTokensTotal', [m, stage, replica]);
    bind('upstream.cacheConfigInfo', [stage, replica], { block_size: '16', cache_dtype: 'auto', gpu_memory_utilization: '0.9' })(1);
  }
  bind('upstream.numRequestsRunning', [m, '0', '0'])(3);
  bind('upstream.numRequestsRunning', [m, '1', '1'])(-3);
  bind('upstream.numRequestsRunning', [m, '1', '1'])(0.75);
  const prompt = bind('upstream.promptTokens', [m, '0', '0']);
  for (const value of [1e6, 2.5e7, 1e12, 0.5]) prompt(value);
  bind('upstream.requestSuccess', [m, '1', '1', 'length'])(1);
  bind('upstream.requestSuccess', [m, '1', '1', 'length'])(1);
  const ttft = bind('upstream.timeToFirstTokenSeconds', [m, '1', '1']);
  for (const value of [0.1, 0.3, -0.5, 0, 0.04, 5000, 2560, 0.001]) ttft(value);
  const iteration = bind('upstream.iterationTokensTotal', [m, '0', '0']);
  for (const value of [1, 7, 8, 9, 16384, 20000]) iteration(value);
  const transfer = bind('pipeline.transferSize', [m, '0', '0', '1', '1']);
  for (const value of [512, 4096, 1048576, 3e6, 268435457]) transfer(value);
  bind('pipeline.transferSize', [m, '0', '1', '1', '0']);

  const python = {
    families: families.map((family) => ({
      name: family.name,
      type: family.type,
      help: family.help,
      labelnames: family.info ? [...family.labels, 'block_size', 'cache_dtype', 'gpu_memory_utilization'] : family.labels,
      buckets: family.buckets,
    })),
    operations,
    created,
  };
  return { store, python };
}

function prometheusClient(input: unknown, disableCreated: boolean): { text: string; openmetrics: string } {
  let output: string;
  try {
    output = execFileSync(PYTHON, [RENDER], {
      input: JSON.stringify(input),
      env: { ...process.env, PROMETHEUS_DISABLE_CREATED_SERIES: disableCreated ? 'True' : 'False' },
      encoding: 'utf8',
    });
  } catch (error) {
    throw new Error(`${PYTHON} with prometheus_client failed (install Debian's python3-prometheus-client, as .ci/run does): ${String(error)}`);
  }
  return JSON.parse(output) as { text: string; openmetrics: string };
}

describe('exposition parity with Python prometheus_client (the library vLLM prints /metrics with)', () => {
  it('the same observations give byte-identical text, `_created` included: gauges, counters, histograms, an info family, large and negative values', () => {
    const { store, python } = scenario();
    const reference = prometheusClient(python, false);
    assert.equal(renderStore(store, { format: 'text', createdSeries: true }).toString('utf8'), reference.text);
  });

  it('and byte-identical OpenMetrics', () => {
    const { store, python } = scenario();
    const reference = prometheusClient(python, false);
    assert.equal(`${renderStore(store, { format: 'openmetrics', createdSeries: true }).toString('utf8')}# EOF\n`, reference.openmetrics);
  });

  it('without `_created` (PROMETHEUS_DISABLE_CREATED_SERIES=True for prometheus_client) too', () => {
    const { store, python } = scenario();
    const reference = prometheusClient(python, true);
    assert.equal(renderStore(store, { format: 'text', createdSeries: false }).toString('utf8'), reference.text);
    assert.equal(`${renderStore(store, { format: 'openmetrics', createdSeries: false }).toString('utf8')}# EOF\n`, reference.openmetrics);
  });
});
