import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { OmniInstrumentation } from '../instrumentation/hooks/omni-instrumentation';
import { createRecorders } from '../instrumentation/recorders/recorders';
import { registerOmniMetrics, type OmniMetricsHandle } from '../register';
import { createBenchHost, PIPELINE_3x4, runBatch, type BenchWorkload } from './bench-host';
import { compare, type Contender, type Measurement } from './measure';
import { CollectingReader, noopSeries, otelSdkSeries, promClientSeries, RebindingStore, type SeriesFactory } from './rebinding-store';

export const CONTENDERS = {
  none: 'no package (host unpatched)',
  ours: 'omni-otel-metrics (series store)',
  oursOff: 'omni-otel-metrics, logStats off',
  promClient: 'same hooks, prom-client cached children',
  otelSdk: 'same hooks, plain OTel SDK instruments',
  floor: 'same hooks, no-op series (floor)',
} as const;

interface Setup {
  readonly contender: Contender;
  close(): Promise<void>;
}

/**
 * One request through every hook of a 3-stage × 4-replica pipeline, 100 tokens per stage, with
 * `batch` requests per engine step. Every contender runs the package's hooks, stats code and
 * recorders; they differ only in where a record lands.
 */
export async function perRequest(batch: number, iterations: number): Promise<Measurement[]> {
  const workload: BenchWorkload = { pools: PIPELINE_3x4, tokens: 100, batch };
  const setups = [
    await setup(CONTENDERS.none, workload, { instrument: false }),
    await setup(CONTENDERS.ours, workload, {}),
    await setup(CONTENDERS.oursOff, workload, { logStats: false }),
    await setup(CONTENDERS.promClient, workload, { series: promClientSeries(new Registry()) }),
    await setup(CONTENDERS.otelSdk, workload, { series: otelSdkSeries(new MeterProvider({ readers: [new CollectingReader()] })) }),
    await setup(CONTENDERS.floor, workload, { series: noopSeries }),
  ];
  try {
    return await compare(
      setups.map((s) => s.contender),
      { iterations: Math.max(1, Math.round(iterations / batch)), perCall: batch },
    );
  } finally {
    for (const s of setups) await s.close();
  }
}

async function setup(name: string, workload: BenchWorkload, options: { instrument?: false; logStats?: false; series?: SeriesFactory }): Promise<Setup> {
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: workload.pools,
    logStats: options.logStats ?? true,
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
  });
  let metrics: OmniMetricsHandle = handle;
  if (options.series) {
    const store = new RebindingStore(handle.catalog, { modelName: 'm' }, options.series);
    metrics = { ...handle, store, ...createRecorders(store, handle.settings, handle.meterProvider) };
  }
  const host = createBenchHost();
  const instrumentation = new OmniInstrumentation({
    metrics,
    orchestratorClass: host.Orchestrator,
    servingClass: host.Serving,
    diagnosticsChannels: false,
    enabled: options.instrument ?? true,
  });
  const orchestrator = new host.Orchestrator(workload.pools);
  const serving = new host.Serving();
  return {
    contender: { name, op: () => runBatch(orchestrator, serving, workload) },
    close: async () => {
      instrumentation.disable();
      metrics.statLogger?.stop();
      await handle.shutdown();
    },
  };
}
