/**
 * Families whose values come from the wall or monotonic clock of the run (TTFT, end-to-end, time
 * to first packet, queue wait): two runs never agree on them, so only their counts are compared.
 */
const CLOCK_FAMILIES = [
  'vllm:time_to_first_token_seconds',
  'vllm:e2e_request_latency_seconds',
  'vllm:omni_e2e_request_latency_s',
  'vllm:omni_audio_ttfp_s',
  'vllm:omni_request_queue_wait_s',
];

export interface SampleComparison {
  /** `vllm:*` samples compared (either side non-zero). */
  readonly compared: number;
  /** The samples that differ, `key: ours vs theirs`, at most 20. */
  readonly differences: readonly string[];
}

/** Compares the `vllm:*` samples of the package with another contender's (missing counts as 0; `_created` skipped). */
export function sameSamples(ours: ReadonlyMap<string, number>, theirs: ReadonlyMap<string, number>): SampleComparison {
  const keys = new Set([...ours.keys(), ...theirs.keys()].filter((key) => key.startsWith('vllm:') && !/_created\{/.test(key)));
  let compared = 0;
  const differences: string[] = [];
  for (const key of keys) {
    const a = ours.get(key) ?? 0;
    const b = theirs.get(key) ?? 0;
    if (a === 0 && b === 0) continue;
    const clock = CLOCK_FAMILIES.some((family) => key.startsWith(family));
    if (clock && !key.startsWith(`${key.split('{')[0]?.replace(/_(bucket|sum|count)$/, '')}_count`)) continue;
    compared++;
    if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a)) && differences.length < 200) differences.push(`${key}: ${a} vs ${b}`);
  }
  return { compared, differences };
}

/** What a run added: `after − before` per sample (registration's own samples, e.g. sleep state, cancel out). */
export function difference(after: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...after].map(([key, value]) => [key, value - (before.get(key) ?? 0)]));
}
