import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createdSeriesDisabledByEnv } from '../../exporters/exposition-text';
import { AdmissionRejections } from '../../instrumentation/recorders/admission-rejections';
import { bindEngineSeries, type EngineSeries } from '../../instrumentation/recorders/engine-series';
import { recordKvOffload, recordSimpleKvOffload } from '../../instrumentation/recorders/kv-offload-recorder';
import type { KvOffloadStats, SimpleKvOffloadStats } from '../../instrumentation/stats/types';
import { resolveCatalog, resolveFullCatalog, type FamilyKey, type ResolvedCatalog } from '../../views/catalog';
import type { StageReplica } from '../../views/stage-replica-map';
import type { LabelValue } from '../../views/store/family-series';
import { SeriesStore } from '../../views/store/series-store';
import { needPeer } from '../support/peers/need-peer';
import { renderOurs, renderWithPython, type PythonReference } from '../support/python-parity';

const RENDER = join(__dirname, 'fixtures', 'prometheus_client_render.py');

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
function millisOf(seconds: string): number {
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

interface PythonScenario {
  readonly families: readonly PythonFamily[];
  readonly operations: readonly Operation[];
  readonly created: readonly string[];
}

const M = 'Qwen/Qwen3-Omni';
/** Extra labels of the info family; the second set needs escaping (quote, backslash, newline) and is not ASCII. */
const CACHE_CONFIG = [
  { block_size: '16', cache_dtype: 'auto', gpu_memory_utilization: '0.9' },
  { block_size: '32', cache_dtype: 'fp8 "e4m3" \\ ü\nx', gpu_memory_utilization: '0.85' },
];

/**
 * A store over the selected families (catalog order) and the same scenario written down for
 * prometheus_client: every series created and every value recorded, in the same order.
 */
function scenario(): { store: SeriesStore; python: PythonScenario } {
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
function withNegativeSum(): ReturnType<typeof scenario> {
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

/** prometheus_client, run by one interpreter: Debian's 0.16, or the newest from PyPI in its own environment. */
interface Client {
  readonly title: string;
  render(input: PythonScenario, env: NodeJS.ProcessEnv): PythonReference;
}

const newestClient = needPeer('prometheus-client', 'exposition parity with the newest prometheus_client');

/**
 * prometheus_client 0.16 printed the exponent of values from 1e10 up with one zero too many
 * (`1.0000260000005e+012`); the package prints it as current clients and Go do (`e+12`). This is
 * the one byte 0.16 differs by, put back before comparing.
 */
function withCurrentExponents(text: string): string {
  return text.replace(/e\+0(\d\d)(?=[\s}])/g, 'e+$1');
}

/**
 * The OpenMetrics a prometheus_client from 0.23.0 on prints when the scraper sends no `escaping=`:
 * sample names escaped with the label-name character set (`vllm:` → `vllm_`) under `# TYPE vllm:…`
 * lines that keep the colon (client_python #1177). The package keeps the colons, as the
 * exposition spec's `underscores` scheme does for names that are already legacy names.
 */
function withIssue1177(openmetrics: string): string {
  return openmetrics
    .split('\n')
    .map((line) => (line.startsWith('#') ? line : line.replace(/^[^{ ]+/, (name) => name.replace(/:/g, '_'))))
    .join('\n');
}

/** The newest client's interpreter, known once the suite's `before` found the peer. */
let newestPython: string | undefined;
const CLIENTS: readonly Client[] = [
  { title: "Debian's prometheus_client 0.16", render: (input, env) => renderWithPython(RENDER, input, env) },
  {
    title: 'the newest prometheus_client',
    render: (input, env) => {
      assert.ok(newestPython, 'the newest prometheus_client is provisioned');
      return renderWithPython(RENDER, input, env, newestPython);
    },
  },
];

for (const client of CLIENTS) {
  const newest = client.title.startsWith('the newest');
  describe(`exposition parity with ${client.title} (the library vLLM prints /metrics with)`, () => {
    before(function () {
      if (newest) newestPython = newestClient.paths(this).bin.python;
    });

    for (const disable of ['False', 'True']) {
      const env = { PROMETHEUS_DISABLE_CREATED_SERIES: disable };
      const createdSeries = !createdSeriesDisabledByEnv(env);
      const what = createdSeries ? '`_created` included' : 'without `_created` (PROMETHEUS_DISABLE_CREATED_SERIES=True)';

      it(`0.0.4 text, ${what}: byte-identical for gauges, counters, histograms, an info family, large, fractional and negative values`, () => {
        const { store, python } = scenario();
        const reference = client.render(python, env);
        const expected = newest ? reference.text : withCurrentExponents(reference.text);
        if (!newest) assert.notEqual(expected, reference.text, '0.16 prints one exponent as `e+012`');
        assert.equal(renderOurs(store, 'text', createdSeries), expected, `prometheus_client ${reference.version}`);
      });

      it(`OpenMetrics, ${what}: byte-identical${newest ? " to what it prints for `escaping=allow-utf-8`; without `escaping=` it differs only by client_python #1177's `vllm_` sample names" : ''}`, () => {
        const { store, python } = scenario();
        const reference = client.render(python, env);
        const ours = renderOurs(store, 'openmetrics', createdSeries);
        if (newest) {
          assert.equal(ours, reference.openmetrics_allow_utf8, `prometheus_client ${reference.version}, escaping=allow-utf-8`);
          assert.notEqual(reference.openmetrics, ours);
          assert.equal(withIssue1177(ours), reference.openmetrics, `prometheus_client ${reference.version}, no escaping=`);
        } else {
          assert.equal(ours, withCurrentExponents(reference.openmetrics), `prometheus_client ${reference.version}`);
        }
      });

      it(`a histogram whose sum is negative, ${what}: text byte-identical; OpenMetrics differs only by leaving out that series' _count and _sum`, () => {
        const { store, python } = withNegativeSum();
        const reference = client.render(python, env);
        const text = newest ? reference.text : withCurrentExponents(reference.text);
        assert.equal(renderOurs(store, 'text', createdSeries), text, `prometheus_client ${reference.version}`);
        // On purpose (README, "Where this differs"): OpenMetrics forbids a negative _sum; prometheus_client prints it anyway.
        const left = [
          'vllm:time_to_first_token_seconds_count{model_name="Qwen/Qwen3-Omni",replica="0",stage="0"} 2.0\n',
          'vllm:time_to_first_token_seconds_sum{model_name="Qwen/Qwen3-Omni",replica="0",stage="0"} -0.75\n',
        ];
        const pair = left.join('');
        const openmetrics = newest ? (reference.openmetrics_allow_utf8 ?? '') : withCurrentExponents(reference.openmetrics);
        assert.equal(openmetrics.split(pair).length, 2, `prometheus_client prints, once:\n${pair}`);
        assert.equal(renderOurs(store, 'openmetrics', createdSeries), openmetrics.replace(pair, ''));
      });
    }
  });
}

/**
 * vLLM 0.32's newer families, declared in `fixtures/vllm_032_render.py` as vLLM declares them
 * (offloading connector, simple CPU offload connector, admission rejections, per-request
 * preemptions) and fed the same payloads, in vLLM's shapes, as our recorders are here.
 */
describe('exposition parity with prometheus_client for the vLLM 0.32 families', () => {
  const RENDER_032 = join(__dirname, 'fixtures', 'vllm_032_render.py');
  const CREATED_AT = '1700000000.123456';
  /** Engine index → (stage, replica): pools [1, 2]. */
  const ENGINES: readonly StageReplica[] = [
    { stage: '0', replica: '0' },
    { stage: '1', replica: '0' },
    { stage: '1', replica: '1' },
  ];
  const GROUPS = new Set(['kvOffload', 'simpleKvOffload']);
  const CORE = new Set(['vllm:request_num_preemptions', 'vllm:admission_rejections_total']);

  type OffloadPayload = Record<string, number | number[]>;
  interface SimplePayload {
    types: Record<string, 'counter' | 'gauge'>;
    data: Record<string, Array<[string[], number]>>;
  }
  /** What each engine reports, in vLLM's payload shapes (`OffloadingConnectorStats.data`, `SimpleCPUOffloadStats.data`). */
  const PREEMPTIONS: Array<[number, number]> = [
    [0, 0],
    [0, 1],
    [2, 3],
    [2, 20],
    [2, 21],
  ];
  const OFFLOADING: Array<[number, OffloadPayload]> = [
    [0, { load_bytes: 1e6, load_time: 0.1, load_size: [1e6], store_bytes: 3e6, store_time: 0.2, store_size: [1e6, 2e6], stores_skipped: 2 }],
    [0, { load_bytes: 2.5e8, load_time: 0.2, load_size: [2.5e8] }], // above the last bound; 0.1 + 0.2 seconds
    [2, { store_bytes: 4096, store_time: 0.000125, store_size: [4096], stores_skipped: 0 }],
  ];
  const SIMPLE_TYPES = {
    'vllm:simple_kv_offload_save_outcomes_total': 'counter',
    'vllm:simple_kv_offload_load_blocks_total': 'counter',
    'vllm:simple_kv_offload_used_blocks': 'gauge',
    'vllm:simple_kv_offload_pending_store_blocks': 'gauge',
    'vllm:simple_kv_offload_info': 'gauge',
  } as const;
  const SIMPLE: Array<[number, SimplePayload]> = [
    [
      2,
      {
        types: SIMPLE_TYPES,
        data: {
          'vllm:simple_kv_offload_save_outcomes_total': [
            [['stored'], 4],
            [['dropped_cpu_full'], 1],
          ],
          'vllm:simple_kv_offload_load_blocks_total': [
            [['issued'], 3],
            [['completed'], 2],
          ],
          'vllm:simple_kv_offload_used_blocks': [[[], 5]],
          'vllm:simple_kv_offload_pending_store_blocks': [[[], 1]],
          'vllm:simple_kv_offload_info': [[['cpu', 'false', 'true', '1024'], 1]],
        },
      },
    ],
    [
      0,
      {
        types: SIMPLE_TYPES,
        data: {
          'vllm:simple_kv_offload_save_outcomes_total': [[['stored'], 0]],
          'vllm:simple_kv_offload_used_blocks': [[[], 7]],
        },
      },
    ],
    [
      2,
      {
        types: SIMPLE_TYPES,
        data: { 'vllm:simple_kv_offload_save_outcomes_total': [[['stored'], 6]], 'vllm:simple_kv_offload_used_blocks': [[[], 2]] },
      },
    ],
  ];
  const ADMISSION = ['max_num_queued_reqs', 'max_num_queued_tokens', 'max_num_queued_reqs'];

  /** The same reports through our recorders, over a store holding just these families. */
  function ours(): SeriesStore {
    const full = resolveFullCatalog();
    const families = full.families.filter((f) => GROUPS.has(f.group) || CORE.has(f.name));
    const catalog: ResolvedCatalog = {
      prefix: full.prefix,
      families,
      byKey: (key) => families.find((family) => family.key === key),
      byName: (name) => families.find((family) => family.name === name),
    };
    const store = new SeriesStore(catalog, { modelName: M, now: () => millisOf(CREATED_AT) });
    const series = bindEngineSeries(store, M, ENGINES);
    for (const [engine, value] of PREEMPTIONS) series[engine]?.requestNumPreemptions.record(value);
    const list = (value: number | number[] | undefined): number[] | undefined => (value === undefined ? undefined : ([] as number[]).concat(value));
    const scalar = (value: number | number[] | undefined): number | undefined => (typeof value === 'number' ? value : undefined);
    for (const [engine, data] of OFFLOADING) {
      const stats: KvOffloadStats = {
        loadBytes: scalar(data.load_bytes),
        loadTime: scalar(data.load_time),
        loadSize: list(data.load_size),
        storeBytes: scalar(data.store_bytes),
        storeTime: scalar(data.store_time),
        storeSize: list(data.store_size),
        storesSkipped: scalar(data.stores_skipped),
      };
      recordKvOffload(series[engine] as EngineSeries, stats);
    }
    for (const [engine, payload] of SIMPLE) {
      const { data } = payload;
      const byLabel = (name: keyof typeof SIMPLE_TYPES): Record<string, number> =>
        Object.fromEntries((data[name] ?? []).map(([labels, value]) => [labels[0] ?? '', value]));
      const gauge = (name: keyof typeof SIMPLE_TYPES): number | undefined => data[name]?.[0]?.[1];
      const info = data['vllm:simple_kv_offload_info']?.[0]?.[0];
      const stats: SimpleKvOffloadStats = {
        saveOutcomes: data['vllm:simple_kv_offload_save_outcomes_total'] ? byLabel('vllm:simple_kv_offload_save_outcomes_total') : undefined,
        loadBlocks: data['vllm:simple_kv_offload_load_blocks_total'] ? byLabel('vllm:simple_kv_offload_load_blocks_total') : undefined,
        usedBlocks: gauge('vllm:simple_kv_offload_used_blocks'),
        pendingStoreBlocks: gauge('vllm:simple_kv_offload_pending_store_blocks'),
        info: info ? { backend: info[0] ?? '', pageCache: info[1] === 'true', lazyOffload: info[2] === 'true', capacityBlocks: Number(info[3]) } : undefined,
      };
      recordSimpleKvOffload(store, M, ENGINES[engine] as StageReplica, stats);
    }
    const admission = new AdmissionRejections(store, M);
    for (const reason of ADMISSION) admission.record(reason);
    return store;
  }

  function reference(env: NodeJS.ProcessEnv): PythonReference {
    const input = {
      model_name: M,
      engines: Object.fromEntries(ENGINES.map(({ stage, replica }, i) => [String(i), [stage, replica]])),
      created: CREATED_AT,
      preemptions: PREEMPTIONS,
      offloading: OFFLOADING,
      simple: SIMPLE,
      admission: ADMISSION,
    };
    return renderWithPython(RENDER_032, input, env);
  }

  for (const disable of ['False', 'True']) {
    const env = { PROMETHEUS_DISABLE_CREATED_SERIES: disable };
    const createdSeries = !createdSeriesDisabledByEnv(env);
    const what = createdSeries ? '`_created` included' : 'without `_created`';
    for (const format of ['text', 'openmetrics'] as const) {
      it(`${format === 'text' ? '0.0.4 text' : 'OpenMetrics'}, ${what}: byte-identical (offload incl. deprecated transfer_type families, simple CPU offload, admission rejections, request_num_preemptions)`, () => {
        const python = reference(env);
        const expected = format === 'text' ? python.text : python.openmetrics;
        assert.equal(renderOurs(ours(), format, createdSeries), expected, `prometheus_client ${python.version}`);
      });
    }
  }
});
