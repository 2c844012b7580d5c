import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createdSeriesDisabledByEnv } from '../../exporters/exposition/exposition-text';
import { resolveCatalog, type FamilyKey, type ResolvedCatalog } from '../../views/catalog/catalog';
import type { LabelValue } from '../../views/store/family-series';
import { SeriesStore } from '../../views/store/series-store';
import { renderOurs, renderWithPython, type PythonReference } from '../support/python-parity';
import { needPeer } from '../support/peers/need-peer';

/**
 * Byte parity of vLLM-Omni's image, diffusion, failure, queue and realtime-VAD families with the
 * same families declared in Python exactly as vLLM-Omni declares them (the fixture transcribes
 * `metrics/definitions.py`, `prometheus.py`, `modality.py` and `realtime.py`; nothing of ours goes
 * into the reference but the observations), rendered by Debian's python3-prometheus-client.
 */
const RENDER = join(__dirname, 'fixtures', 'vllm_omni_families.py');

/** Catalog order, which is also the order the reference registers them in. */
const KEYS: readonly FamilyKey[] = [
  'pipeline.numRequestsWaiting',
  'pipeline.requestsSuccess',
  'pipeline.stageOutputsQueueSize',
  'pipeline.stageInflightRequests',
  'pipeline.stageGenTime',
  'pipeline.requestQueueWait',
  'pipeline.stageWaitingRequests',
  'pipeline.numInferenceSteps',
  'pipeline.imageCount',
  'pipeline.imagePixels',
  'pipeline.peakMemory',
  'pipeline.stageInQueue',
  'pipeline.requestsFailed',
  'pipeline.kvWait',
  'pipeline.diffusionExec',
  'pipeline.diffusionExecPerStep',
  'pipeline.diffusionPreprocess',
  'pipeline.diffusionPostprocess',
  'pipeline.vaeDecode',
  'pipeline.diffusionForward',
  'pipeline.diffusionKvLoad',
  'pipeline.imageTtfp',
  'pipeline.denoiseStepLatency',
  'pipeline.realtimeVadActiveSessions',
  'pipeline.realtimeVadInferenceLatency',
  'pipeline.realtimeVadEndpointDelay',
  'pipeline.realtimeVadErrors',
];

const M = 'Qwen/Qwen-Image';

interface Operation {
  readonly family: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly op: 'create' | 'record';
  readonly value?: number;
}

interface Scenario {
  readonly families: readonly string[];
  readonly operations: readonly Operation[];
  readonly created: readonly string[];
}

/** Creation time of the n-th series, whole milliseconds (a double carries those exactly, as Python's float does). */
const createdAt = (n: number): string => `${1700000000 + 61 * n}.${String((n * 137) % 1000).padStart(3, '0')}`;

function millisOf(seconds: string): number {
  const [whole, fraction = ''] = seconds.split('.');
  return Number(`${whole}${fraction.padEnd(3, '0')}`);
}

/** The store over the vLLM-Omni families under their upstream prefix, and the same observations for the reference. */
function scenario(): { store: SeriesStore; python: Scenario } {
  const full = resolveCatalog({ logStats: true, prefix: 'vllm_omni:' });
  const families = KEYS.map((key) => {
    const family = full.byKey(key);
    assert.ok(family, key);
    return family;
  });
  const catalog: ResolvedCatalog = {
    prefix: full.prefix,
    families,
    byKey: (key) => families.find((family) => family.key === key),
    byName: (name) => families.find((family) => family.name === name),
  };
  let issued = 0;
  const store = new SeriesStore(catalog, { modelName: M, now: () => millisOf(createdAt(issued++)) });
  const operations: Operation[] = [];
  const created: string[] = [];
  const bind = (key: FamilyKey, ...values: LabelValue[]) => {
    const family = store.family(key);
    assert.ok(family, key);
    const before = family.series.length;
    const series = store.bind(key, [M, ...values]);
    const labels: Record<string, string> = {};
    family.family.labels.forEach((name, i) => {
      labels[name] = String([M, ...values][i]);
    });
    if (family.series.length > before) {
      if (family.family.type !== 'gauge') created.push(createdAt(issued - 1));
      operations.push({ family: family.family.name, labels, op: 'create' });
    }
    return (...recorded: number[]) => {
      for (const value of recorded) {
        series.record(value);
        operations.push({ family: family.family.name, labels, op: 'record', value });
      }
    };
  };

  // What the constructors bind (`.labels(model_name=...)` in `__init__`), in their order.
  bind('pipeline.requestQueueWait');
  bind('pipeline.numInferenceSteps');
  bind('pipeline.imageCount');
  bind('pipeline.imagePixels');
  bind('pipeline.realtimeVadActiveSessions');
  bind('pipeline.realtimeVadInferenceLatency');
  bind('pipeline.realtimeVadEndpointDelay');

  // Queue and routing state.
  bind('pipeline.numRequestsWaiting')(3, 0);
  bind('pipeline.stageWaitingRequests', '1')(8);
  bind('pipeline.stageWaitingRequests', '2')(0);
  bind('pipeline.stageOutputsQueueSize', '2', '0')(5);
  bind('pipeline.stageInflightRequests', '2', '1')(12);
  bind('pipeline.requestQueueWait')(0, 0.05, 0.3, 301);
  bind('pipeline.kvWait', 'MooncakeConnector')(0.125, 0);
  bind('pipeline.kvWait', 'unknown')(1.5);

  // Completions and failures by reason.
  bind('pipeline.requestsSuccess', 'stop')(1, 1, 1);
  bind('pipeline.requestsSuccess', 'abort')(1, 1);
  for (const reason of ['client_abort', 'client_disconnect', 'stage_error', 'unknown']) bind('pipeline.requestsFailed', reason);
  bind('pipeline.requestsFailed', 'stage_error')(1);
  bind('pipeline.requestsFailed', 'client_disconnect')(1);

  // An image stage: generation time, workload, memory, queueing.
  bind('pipeline.stageGenTime', '0', 'llm')(0.08);
  bind('pipeline.stageGenTime', '2', 'diffusion')(2.5, 0.05, 300);
  bind('pipeline.numInferenceSteps')(20, 50, 1);
  bind('pipeline.imageCount')(2, 1);
  bind('pipeline.imagePixels')(131072, 1048576);
  bind('pipeline.peakMemory', '2')(6144.5);
  bind('pipeline.stageInQueue', '2')(0, 0.25, 0.001);

  // The diffusion breakdown of replica 1, and a replica that has only a TTFP.
  bind('pipeline.diffusionExec', '2', '1')(2);
  bind('pipeline.diffusionExecPerStep', '2', '1')(0.08, 0.1);
  bind('pipeline.diffusionPreprocess', '2', '1')(0.01, 0);
  bind('pipeline.diffusionPostprocess', '2', '1')(0.2);
  bind('pipeline.vaeDecode', '2', '1')(0.15);
  bind('pipeline.diffusionForward', '2', '1')(1.75);
  bind('pipeline.diffusionKvLoad', '2', '1')(0.005);
  bind('pipeline.imageTtfp', '2', '1')(2.25);
  bind('pipeline.imageTtfp', '2', '0')(0.3333333333333333);
  bind('pipeline.denoiseStepLatency', '2', '1')(0.07);

  // Realtime sessions: two open, one closed; batch times and endpoint delays in seconds; errors.
  bind('pipeline.realtimeVadActiveSessions')(1, 2, 1);
  bind('pipeline.realtimeVadInferenceLatency')(0.0125, 0.004, 0.25);
  bind('pipeline.realtimeVadEndpointDelay')(0.512, 1.5);
  bind('pipeline.realtimeVadErrors', 'input_overflow')(1, 1);
  bind('pipeline.realtimeVadErrors', 'error')(1);

  return { store, python: { families: families.map((family) => family.name), operations, created } };
}

function prometheusClient(input: Scenario, env: NodeJS.ProcessEnv): PythonReference {
  return renderWithPython(RENDER, input, env);
}

describe('exposition parity: vLLM-Omni image, diffusion, failure, queue and realtime-VAD families, declared as vLLM-Omni declares them', function () {
  needPeer('debian-prometheus-client', this);
  for (const disable of ['False', 'True']) {
    const env = { PROMETHEUS_DISABLE_CREATED_SERIES: disable };
    const createdSeries = !createdSeriesDisabledByEnv(env);
    const what = createdSeries ? '`_created` included' : 'without `_created`';

    it(`0.0.4 text, ${what}: byte-identical`, () => {
      const { store, python } = scenario();
      const reference = prometheusClient(python, env);
      assert.equal(renderOurs(store, 'text', createdSeries), reference.text, `prometheus_client ${reference.version}`);
    });

    it(`OpenMetrics, ${what}: byte-identical`, () => {
      const { store, python } = scenario();
      const reference = prometheusClient(python, env);
      assert.equal(renderOurs(store, 'openmetrics', createdSeries), reference.openmetrics, `prometheus_client ${reference.version}`);
    });
  }

  it('every family of the reference is one of ours, with the same name (the fixture refuses a name it does not declare)', () => {
    const { python } = scenario();
    assert.equal(new Set(python.families).size, KEYS.length);
    assert.ok(python.families.every((name) => name.startsWith('vllm_omni:')));
  });
});
