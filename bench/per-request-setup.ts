import type { SloOptions } from '../index';
import { builtPackage } from './built-package';
import { createBenchHost, PIPELINE_3x4, runBatch, type BenchWorkload } from './bench-host';
import { parseSamples } from './direct-path/cells';
import { createDirectHost } from './direct-path/direct-host';
import { floatCells } from './direct-path/float-cells';
import { promClientCells } from './direct-path/prom-client-cells';

/**
 * The per-request contenders: the host alone; the package's hooks on it; the same hooks with
 * exemplars on and every request traced (a sampled `traceparent`); the same hooks with objectives
 * (`slo`: all five declared, each request judged and counted); the same samples written by hand
 * into prom-client; and the same samples written by hand into plain cells (the floor).
 */
export const PER_REQUEST_CONTENDERS = ['host', 'ours', 'ours-traced', 'ours-slo', 'prom-client', 'floor'] as const;
export type PerRequestContender = (typeof PER_REQUEST_CONTENDERS)[number];

export const PER_REQUEST_WORKLOAD: BenchWorkload = { pools: PIPELINE_3x4, tokens: 100, batch: 1 };

export interface PerRequestSetup {
  /** One request through every hooked call site. */
  run(): Promise<void>;
  /** Every sample the contender holds, keyed by `sampleKey` (none for the bare host). */
  samples(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** The sampled trace context the traced contender's requests carry. */
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** Every objective, each a bound the bench's requests meet (time and audio figures) or skip (its answers have no first-stage tokens). */
const OBJECTIVES: SloOptions = { firstOutputSeconds: 60, e2eSeconds: 60, tpotSeconds: 1, audioTtfpSeconds: 60, audioRtf: 10 };

export async function setupPerRequest(contender: PerRequestContender, workload = PER_REQUEST_WORKLOAD): Promise<PerRequestSetup> {
  if (contender === 'ours') return setupOurs(workload, false);
  if (contender === 'ours-traced') return setupOurs({ ...workload, traceparent: TRACEPARENT }, true);
  if (contender === 'ours-slo') return setupOurs(workload, false, OBJECTIVES);
  const direct = contender === 'host' ? undefined : createDirectHost(contender === 'floor' ? floatCells() : promClientCells(), workload.pools);
  const host = direct ?? createBenchHost();
  const orchestrator = new host.Orchestrator(workload.pools);
  const serving = new host.Serving();
  return {
    run: () => runBatch(orchestrator, serving, workload),
    samples: () => direct?.samples() ?? Promise.resolve(new Map()),
    close: () => Promise.resolve(),
  };
}

async function setupOurs(workload: BenchWorkload, exemplars: boolean, slo?: SloOptions): Promise<PerRequestSetup> {
  const { OmniInstrumentation, registerOmniMetrics } = builtPackage();
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: workload.pools,
    logStats: true,
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    selfCheck: false,
    exemplars,
    slo,
  });
  const host = createBenchHost();
  const instrumentation = new OmniInstrumentation({
    metrics: handle,
    orchestratorClass: host.Orchestrator,
    servingClass: host.Serving,
    diagnosticsChannels: false,
  });
  const orchestrator = new host.Orchestrator(workload.pools);
  const serving = new host.Serving();
  return {
    run: () => runBatch(orchestrator, serving, workload),
    samples: async () => parseSamples(await handle.metricsText()),
    close: async () => {
      instrumentation.disable();
      await handle.shutdown();
    },
  };
}
