import type { ResolvedFamily } from './catalog';

/**
 * Which families keep exemplars when they are on: the latency histograms (every histogram in
 * seconds: TTFT, inter-token, e2e, queue, prefill/decode, audio TTFP, stage generation, transfer
 * timings, diffusion) and the request counters (counted in `{request}`). The process and
 * deprecated families are left out: no request stands behind their values.
 */
export function keepsExemplars(family: ResolvedFamily): boolean {
  if (family.group === 'process' || family.group === 'hidden') return false;
  if (family.type === 'histogram') return family.unit === 's';
  return family.type === 'counter' && family.unit === '{request}';
}
