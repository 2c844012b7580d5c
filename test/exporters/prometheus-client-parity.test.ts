import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createdSeriesDisabledByEnv } from '../../exporters/exposition/exposition-text';
import { AdmissionRejections } from '../../instrumentation/recorders/admission-rejections';
import { bindEngineSeries, type EngineSeries } from '../../instrumentation/recorders/engine-series';
import { recordKvOffload, recordSimpleKvOffload } from '../../instrumentation/recorders/kv-offload-recorder';
import type { KvOffloadStats, SimpleKvOffloadStats } from '../../instrumentation/stats/types';
import { resolveFullCatalog, type ResolvedCatalog } from '../../views/catalog/catalog';
import type { StageReplica } from '../../views/stage-replica-map';
import { SeriesStore } from '../../views/store/series-store';
import { needPeer } from '../support/peers/need-peer';
import { M, millisOf, scenario, withNegativeSum, type PythonScenario } from '../support/prometheus-client-scenario';
import { renderOurs, renderWithPython, type PythonReference } from '../support/python-parity';

const RENDER = join(__dirname, 'fixtures', 'prometheus_client_render.py');

/** prometheus_client, run by one interpreter: Debian's 0.16, or the newest from PyPI in its own environment. */
interface Client {
  readonly title: string;
  render(input: PythonScenario, env: NodeJS.ProcessEnv): PythonReference;
}

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
  describe(`exposition parity with ${client.title} (the library vLLM prints /metrics with)`, function () {
    const peer = needPeer(newest ? 'prometheus-client' : 'debian-prometheus-client', this);
    before(() => {
      if (newest) newestPython = peer.paths().bin.python;
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
describe('exposition parity with prometheus_client for the vLLM 0.32 families', function () {
  needPeer('debian-prometheus-client', this);
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
  // Engine 1 never reports: it has no flat series, only the deprecated transfer_type ones.
  const OFFLOADING: Array<[number, OffloadPayload]> = [
    [0, { load_bytes: 1e6, load_time: 0.1, load_size: [1e6], store_bytes: 3e6, store_time: 0.2, store_size: [1e6, 2e6], stores_skipped: 2 }],
    [0, { load_bytes: 2.5e8, load_time: 0.2, load_size: [2.5e8], lookup_sync_delay: [0.00002, 0.3], allocation_failure: 1 }], // above the last bound; 0.1 + 0.2 seconds
    [2, { store_bytes: 4096, store_time: 0.000125, store_size: [4096], stores_skipped: 0, lookup_async_delay: [0.02, 12] }],
    [2, { lookup_sync_delay: [0.004], allocation_failure: 0 }],
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
          // Increments of zero: vLLM's get_stats never reports them, so no series appears.
          'vllm:simple_kv_offload_save_outcomes_total': [[['stored'], 0]],
          'vllm:simple_kv_offload_load_blocks_total': [
            [['issued'], 0],
            [['completed'], 1],
          ],
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
        lookupSyncDelaySeconds: list(data.lookup_sync_delay),
        lookupAsyncDelaySeconds: list(data.lookup_async_delay),
        allocationFailures: scalar(data.allocation_failure),
      };
      recordKvOffload(store, M, ENGINES[engine] as StageReplica, series[engine] as EngineSeries, stats);
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
