import { performance } from 'node:perf_hooks';
import { runLoad } from '../examples/load';
import { startReferencePipeline } from '../examples/reference-pipeline';

export const PIPELINE_VARIANTS = {
  none: 'no package (classes unpatched)',
  off: 'omni-otel-metrics, logStats off',
  on: 'omni-otel-metrics, logStats on',
} as const;
export type PipelineVariant = keyof typeof PIPELINE_VARIANTS;

export interface PipelineRun {
  /** Completed requests per second of wall time. */
  readonly throughput: number;
  /** End-to-end latency percentiles seen by the client, seconds. */
  readonly p50: number;
  readonly p99: number;
  /** Process CPU (server and client share it) per request, milliseconds. */
  readonly cpuPerRequestMs: number;
}

const VARIANT_OPTIONS: Readonly<Record<PipelineVariant, { instrument?: boolean; logStats: boolean }>> = {
  none: { instrument: false, logStats: false },
  off: { logStats: false },
  on: { logStats: true },
};

/**
 * The reference pipeline (fast profile, pools [1, 2, 1]) under the same seeded load with the
 * package absent, present with logStats off, and on; variants alternate round by round (each
 * round in a rotated order) so drift hits all of them alike. One warm-up round is discarded.
 */
export async function referencePipelineRuns(rounds: number, requests: number): Promise<Record<PipelineVariant, PipelineRun[]>> {
  const runs: Record<PipelineVariant, PipelineRun[]> = { none: [], off: [], on: [] };
  const variants = Object.keys(PIPELINE_VARIANTS) as PipelineVariant[];
  for (let round = -1; round < rounds; round++) {
    const order = variants.map((_, i) => variants[(i + Math.max(round, 0)) % variants.length] as PipelineVariant);
    for (const variant of order) {
      const run = await runOnce(variant, requests, round);
      if (round >= 0) runs[variant].push(run);
    }
  }
  return runs;
}

async function runOnce(variant: PipelineVariant, requests: number, seed: number): Promise<PipelineRun> {
  const pipeline = await startReferencePipeline({
    host: '127.0.0.1',
    port: 0,
    metricsPort: false,
    profile: 'fast',
    logIntervalSeconds: 0,
    ...VARIANT_OPTIONS[variant],
  });
  try {
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const summary = await runLoad({ baseUrl: `${pipeline.apiUrl}/v1`, requests, concurrency: 8, seed: Math.max(seed, 0), disconnectRatio: 0 });
    const wallSeconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    if (summary.outcomes.ok !== requests) throw new Error(`${variant}: ${summary.outcomes.ok} of ${requests} requests completed`);
    return { throughput: requests / wallSeconds, p50: summary.e2e.p50, p99: summary.e2e.p99, cpuPerRequestMs: (cpu.user + cpu.system) / 1000 / requests };
  } finally {
    await pipeline.stop();
  }
}
