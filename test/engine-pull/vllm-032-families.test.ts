import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { parseSamples } from '../support/exposition';
import { EngineServer } from './support/engine-server';
import { needPeer } from '../support/peers/need-peer';
import { debianPython } from '../support/python-parity';

/**
 * Engines printing vLLM 0.32's newer families (offloading connector incl. the deprecated
 * transfer_type ones, simple CPU offload, admission rejections, request_num_preemptions), as
 * prometheus_client prints them from the families declared the way vLLM declares them
 * (`test/exporters/fixtures/vllm_032_render.py`, Debian's python3-prometheus-client).
 */
const RENDER = join(__dirname, '..', 'exporters', 'fixtures', 'vllm_032_render.py');
const MODEL = 'org/model-032';

interface Rendered {
  readonly text: string;
  readonly openmetrics: string;
}

function render(engines: Record<string, [string, string]>, relabel: boolean): Rendered {
  const scenario = {
    model_name: MODEL,
    engines,
    created: '1767225600.5',
    relabel,
    preemptions: [
      [0, 0],
      [0, 4],
      [1, 25],
    ],
    offloading: [
      [0, { load_bytes: 1e6, load_time: 0.1, load_size: [1e6], store_bytes: 3e6, store_time: 0.2, store_size: [3e6], stores_skipped: 2 }],
      [1, { store_bytes: 4096, store_time: 0.000125, store_size: [4096] }],
    ],
    simple: [
      [
        1,
        {
          types: {
            'vllm:simple_kv_offload_save_outcomes_total': 'counter',
            'vllm:simple_kv_offload_used_blocks': 'gauge',
            'vllm:simple_kv_offload_info': 'gauge',
          },
          data: {
            'vllm:simple_kv_offload_save_outcomes_total': [[['stored'], 4]],
            'vllm:simple_kv_offload_used_blocks': [[[], 5]],
            'vllm:simple_kv_offload_info': [[['cpu', 'false', 'true', '1024'], 1]],
          },
        },
      ],
    ],
    admission: ['max_num_queued_reqs', 'max_num_queued_tokens'],
  };
  const output = execFileSync(debianPython(), [RENDER], { input: JSON.stringify(scenario), encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  return JSON.parse(output) as Rendered;
}

/** The families the fixture declares, as a 0.0.4 scrape names them. */
const FAMILIES = [
  'vllm:request_num_preemptions',
  'vllm:admission_rejections_total',
  'vllm:kv_offload_total_bytes_total',
  'vllm:kv_offload_total_time_total',
  'vllm:kv_offload_size',
  'vllm:kv_offload_load_bytes_total',
  'vllm:kv_offload_load_time_total',
  'vllm:kv_offload_load_size',
  'vllm:kv_offload_store_bytes_total',
  'vllm:kv_offload_store_time_total',
  'vllm:kv_offload_store_size',
  'vllm:kv_offload_stores_skipped_total',
  'vllm:simple_kv_offload_save_outcomes_total',
  'vllm:simple_kv_offload_load_blocks_total',
  'vllm:simple_kv_offload_used_blocks',
  'vllm:simple_kv_offload_pending_store_blocks',
  'vllm:simple_kv_offload_info',
];

function headerLines(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`# HELP ${name} `) || line.startsWith(`# TYPE ${name} `));
}

/**
 * One replica's samples of the fixture's families, sorted, `_created` included. With `frontend`,
 * a sample with no stage and replica (vLLM's admission counter, which has no `engine` label) is
 * taken as this replica's: the puller gives such a sample to every replica its URL serves.
 */
function replicaSamples(text: string, stage: string, replica: string, frontend = false): string[] {
  const stems = FAMILIES.map((name) => name.replace(/_total$/, ''));
  return parseSamples(text)
    .filter((sample) => stems.some((stem) => sample.name.startsWith(stem)))
    .map((sample) => (frontend && sample.labels.stage === undefined ? { ...sample, labels: { ...sample.labels, stage, replica } } : sample))
    .filter((sample) => sample.labels.model_name === MODEL && sample.labels.stage === stage && sample.labels.replica === replica)
    .map((sample) => `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1)))} ${sample.rawValue}`)
    .sort();
}

describe('engine pull: vLLM 0.32 families keep HELP/TYPE and get stage/replica', function () {
  needPeer('debian-prometheus-client', this);
  // Stage 0: one data-parallel server with engines 0 and 1, 0.0.4 text. Stage 1: a server that
  // answers OpenMetrics 1.0.0 whatever it is asked (vLLM's Rust frontend), `# EOF` terminated.
  const POOLS = [2, 1];
  let dp: EngineServer | undefined;
  let openMetricsOnly: EngineServer | undefined;
  let handle: OmniMetricsHandle | undefined;
  let expectedDp: Rendered;
  let expectedOm: Rendered;

  before(async () => {
    const served = render({ '0': ['0', '0'], '1': ['0', '1'] }, false);
    expectedDp = render({ '0': ['0', '0'], '1': ['0', '1'] }, true);
    const servedOm = render({ '0': ['1', '0'], '1': ['1', '1'] }, false);
    expectedOm = render({ '0': ['1', '0'], '1': ['1', '1'] }, true);
    assert.ok(served.text.includes('engine="1"') && servedOm.openmetrics.endsWith('# EOF\n'), 'the engines print vLLM their own way');
    dp = await EngineServer.start(served.text);
    openMetricsOnly = await EngineServer.start(servedOm.openmetrics);
    openMetricsOnly.contentType = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: POOLS,
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      enginePull: {
        engines: [
          { stage: 0, replica: 0, url: dp.url, engine: 0 },
          { stage: 0, replica: 1, url: dp.url, engine: 1 },
          { stage: 1, replica: 0, url: openMetricsOnly.url, engine: 0 },
        ],
        timeoutMillis: 1000,
        cacheMillis: 0,
      },
    });
  });

  after(async () => {
    await handle?.shutdown();
    await dp?.down();
    await openMetricsOnly?.down();
  });

  it('every family: one HELP and one TYPE line, the engine’s own, in both formats', async () => {
    const text = await handle!.metricsText();
    const om = await handle!.metricsText('openmetrics');
    for (const name of FAMILIES) {
      assert.deepEqual(headerLines(text, name), headerLines(expectedDp.text, name), `${name} in 0.0.4 text`);
      const stem = name.replace(/_total$/, '');
      assert.deepEqual(headerLines(om, stem), headerLines(expectedDp.openmetrics, stem), `${name} in OpenMetrics`);
    }
  });

  it('a 0.0.4 engine: each engine’s series under its stage and replica, values and _created as printed; the frontend’s admission counter under each replica of the URL', async () => {
    const text = await handle!.metricsText();
    for (const replica of ['0', '1']) {
      const expected = replicaSamples(expectedDp.text, '0', replica, true);
      assert.ok(expected.length > 20, `engine ${replica} prints series`);
      assert.deepEqual(replicaSamples(text, '0', replica), expected, `stage 0 replica ${replica}`);
    }
    assert.ok(!text.includes('engine="'), 'no engine label left');
  });

  it('an OpenMetrics-only engine: counters read from `_total`/`_created` samples, served as the 0.0.4 engine would be', async () => {
    const text = await handle!.metricsText();
    const expected = replicaSamples(expectedOm.text, '1', '0', true);
    assert.ok(
      expected.some((line) => line.startsWith('vllm:kv_offload_total_bytes_total[')),
      'a deprecated transfer_type counter',
    );
    assert.deepEqual(replicaSamples(text, '1', '0'), expected);
    assert.equal(openMetricsOnly!.requests > 0, true);
  });
});
