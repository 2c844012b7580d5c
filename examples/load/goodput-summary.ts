import { missedObjectives, type SloOptions } from 'omni-otel-metrics';
import type { RequestResult } from './run-load';

/** The goodput a load run saw from the client, judged by the rule the pipeline's `slo` option counts by. */
export interface GoodputSummary {
  readonly slo: SloOptions;
  /** Requests that completed (`ok`): the ones judged. */
  readonly completed: number;
  /** Completed requests that met every objective the client can measure. */
  readonly good: number;
  /** Good requests per second of the run, as vLLM's `--goodput` reports it. */
  readonly perSecond: number;
  /** Completed requests that missed each objective. */
  readonly misses: Readonly<Record<string, number>>;
}

/**
 * Judges the completed requests as a client sees them, as vLLM's benchmark does: the first output
 * is the first streamed delta with content (a whole answer for a request that does not stream), the
 * output tokens are `usage.completion_tokens`, the audio's first packet is its first audio delta. The
 * real-time factor is the server's (its generation time is not on the wire): only the pipeline
 * judges `audioRtf`.
 */
export function summarizeGoodput(slo: SloOptions, results: readonly RequestResult[], wallSeconds: number): GoodputSummary {
  const misses: Record<string, number> = {};
  let completed = 0;
  let good = 0;
  for (const result of results) {
    if (result.outcome !== 'ok' || result.e2eSeconds === undefined) continue;
    completed++;
    const missed = missedObjectives(slo, {
      firstOutputSeconds: result.ttftSeconds ?? result.e2eSeconds,
      e2eSeconds: result.e2eSeconds,
      outputTokens: result.outputTokens ?? 0,
      audioTtfpSeconds: result.audioBytes > 0 ? (result.audioTtfpSeconds ?? result.e2eSeconds) : undefined,
    });
    if (missed.length === 0) good++;
    for (const objective of missed) misses[objective] = (misses[objective] ?? 0) + 1;
  }
  return { slo, completed, good, perSecond: good / Math.max(wallSeconds, 1e-9), misses };
}
