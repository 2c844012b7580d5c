import { describeSlo } from '../slo-env';
import type { GoodputSummary } from './goodput-summary';
import type { LatencySummary } from './latency-summary';
import type { LoadProgress, LoadSummary } from './run-load';

export function formatSummary(summary: LoadSummary): string {
  const { ok, aborted, failed, error } = summary.outcomes;
  const lines = [
    `model ${summary.model}: ${summary.requests} requests in ${summary.wallSeconds.toFixed(1)} s ` +
      `(${(summary.requests / Math.max(summary.wallSeconds, 1e-9)).toFixed(1)} req/s)`,
    `  outcomes       ok ${ok}   aborted ${aborted}   failed (5xx) ${failed}   error ${error}`,
    `  finish         ${formatCounts(summary.finishReasons)}`,
    `  TTFT (stream)  ${formatLatency(summary.ttft)}`,
    `  e2e (ok)       ${formatLatency(summary.e2e)}`,
    `  audio          ${summary.audioSeconds.toFixed(1)} s received`,
    `  images         ${summary.images} received${summary.imagesNotServed > 0 ? ` (the server serves no images API: ${summary.imagesNotServed} image requests sent as chat)` : ''}`,
  ];
  if (summary.goodput !== undefined) lines.push(...formatGoodput(summary.goodput));
  for (const event of summary.scaling) {
    const what = event.change === 'add' ? `+ replica ${event.replica ?? '?'}` : `- replica ${event.replica ?? '?'} (drained, leaves when idle)`;
    lines.push(`  scaling        ${event.doneAtSeconds.toFixed(1)} s  stage ${event.stage} ${event.error === undefined ? what : `failed: ${event.error}`}`);
  }
  const errors = Object.entries(summary.errors);
  if (errors.length > 0) lines.push('  errors', ...errors.map(([message, count]) => `    ${count} x ${message}`));
  return lines.join('\n');
}

export function formatProgress({ done, total, outcomes }: LoadProgress): string {
  return `[load] ${done}/${total} done (ok ${outcomes.ok}, aborted ${outcomes.aborted}, failed ${outcomes.failed}, error ${outcomes.error})`;
}

function formatLatency(latency: LatencySummary): string {
  if (latency.count === 0) return 'n/a (no samples)';
  const ms = (s: number): string => `${(s * 1000).toFixed(0)} ms`;
  return `p50 ${ms(latency.p50)}   p90 ${ms(latency.p90)}   p99 ${ms(latency.p99)}   max ${ms(latency.max)}   (n=${latency.count})`;
}

function formatCounts(counts: Readonly<Record<string, number>>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? '-' : entries.map(([key, count]) => `${key} ${count}`).join('   ');
}

/** `goodput 6.2 req/s: 31 of 40 completed requests met e2e ≤ 5 s, tpot ≤ 0.05 s (77.5 %)`, then the misses by objective. */
function formatGoodput(goodput: GoodputSummary): string[] {
  const share = goodput.completed === 0 ? 'n/a' : `${((100 * goodput.good) / goodput.completed).toFixed(1)} %`;
  const lines = [
    `  goodput        ${goodput.perSecond.toFixed(2)} req/s: ${goodput.good} of ${goodput.completed} completed requests met ${describeSlo(goodput.slo)} (${share}, as the client measures)`,
    `  SLO misses     ${formatCounts(goodput.misses)}`,
  ];
  if (goodput.slo.audioRtf !== undefined) lines.push("                 (audio_rtf is the server's own figure: only the pipeline judges it)");
  return lines;
}
