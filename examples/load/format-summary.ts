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
