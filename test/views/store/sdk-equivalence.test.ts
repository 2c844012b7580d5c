import assert from 'node:assert/strict';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createBenchHost, runBatch } from '../../../bench/bench-host';
import { otelSdkSeries, RebindingStore } from '../../../bench/rebinding-store';
import { OmniPrometheusReader } from '../../../exporters/prometheus-reader';
import { OmniInstrumentation } from '../../../instrumentation/hooks/omni-instrumentation';
import { createRecorders } from '../../../instrumentation/recorders/recorders';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../../register';
import { createOmniViews } from '../../../views/views';
import { parseSamples, type Sample } from '../../support/exposition';
import { recordCycle1 } from '../../otlp/support/workload';

const POOLS = [1, 2, 2];

/** Every hook and recorder path: two batches through the hooked host, a stat-logger cycle, and one negative transfer time. */
async function workload(metrics: OmniMetricsHandle): Promise<void> {
  const host = createBenchHost();
  const instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: host.Orchestrator, servingClass: host.Serving, diagnosticsChannels: false });
  try {
    const orchestrator = new host.Orchestrator(POOLS);
    const serving = new host.Serving();
    await runBatch(orchestrator, serving, { pools: POOLS, tokens: 12, batch: 1 });
    await runBatch(orchestrator, serving, { pools: POOLS, tokens: 7, batch: 3 });
    recordCycle1(metrics);
    // Clock skew between processes: a negative in-flight time.
    metrics.transfer.observeInFlightTime(0, 0, 1, 1, -0.002);
  } finally {
    instrumentation.disable();
  }
}

const keyOf = (sample: Sample): string => `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;

function samplesOf(text: string): Map<string, Sample> {
  return new Map(parseSamples(text).map((sample) => [keyOf(sample), sample]));
}

describe('the series store against plain OpenTelemetry SDK instruments', () => {
  it('one workload recorded into both gives the same samples, apart from the intended changes: eager zero series, a negative observation kept', async () => {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: POOLS,
      logStats: true,
      prometheus: { createdSeries: false },
      exporters: [],
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
    });
    const reader = new OmniPrometheusReader({ createdSeries: false });
    const provider = new MeterProvider({ readers: [reader], views: createOmniViews(handle.catalog, { stageReplicaMap: handle.stageReplicaMap }) });
    const sdk = otelSdkSeries(provider);
    // Every series the recorders bind records into the store and into an SDK instrument alike.
    const both = new RebindingStore(handle.catalog, { modelName: 'm' }, (family, attributes) => {
      const ours = handle.store.bindAttributes(family.key, attributes);
      const theirs = sdk(family, attributes);
      return {
        record: (value) => {
          ours.record(value);
          theirs.record(value);
        },
      };
    });
    try {
      await workload({ ...handle, store: both, ...createRecorders(both, handle.settings, provider) });
      const ours = samplesOf(await handle.metricsText());
      const theirs = samplesOf(await reader.metricsText());

      const inFlight = { from_replica: '0', from_stage: '0', model_name: 'm', to_replica: '1', to_stage: '1' };
      const isInFlight = (sample: Sample): boolean =>
        sample.name.startsWith('vllm:omni_transfer_in_flight_s_') && Object.entries(inFlight).every(([name, value]) => sample.labels[name] === value);
      for (const [key, sample] of theirs) {
        const mine = ours.get(key);
        assert.ok(mine, `${key} is in the store's exposition`);
        if (!isInFlight(sample)) {
          assert.equal(mine.rawValue, sample.rawValue, key);
        } else if (sample.name.endsWith('_sum')) {
          assert.equal(mine.value, sample.value + -0.002, 'the negative observation is in the sum');
        } else {
          assert.equal(mine.value, sample.value + 1, `${key}: the negative observation is counted (the SDK drops it)`);
        }
      }
      const storeOnly = [...ours].filter(([key]) => !theirs.has(key));
      assert.ok(storeOnly.length > 0);
      for (const [key, sample] of storeOnly) {
        const awake = sample.name === 'vllm:engine_sleep_state' && sample.labels.sleep_state === 'awake';
        assert.equal(sample.value, awake ? 1 : 0, `${key}: only eager series, at zero (awake = 1), are the store's alone`);
      }
    } finally {
      await provider.shutdown();
      await handle.shutdown();
    }
  });
});
