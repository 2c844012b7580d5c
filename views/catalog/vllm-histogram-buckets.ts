import type { UpstreamFamilyKey } from './upstream-families';
import { UPSTREAM_FAMILIES } from './upstream-families';
import { exposedName } from './names';

/** vLLM's `BucketFamilyKey` (`vllm/v1/metrics/buckets.py`): the names `--custom-histogram-buckets` takes. */
export const VLLM_BUCKET_FAMILIES: Readonly<Record<string, readonly UpstreamFamilyKey[]>> = {
  request_latency: [
    'e2eRequestLatencySeconds',
    'requestQueueTimeSeconds',
    'requestInferenceTimeSeconds',
    'requestPrefillTimeSeconds',
    'requestDecodeTimeSeconds',
  ],
  time_to_first_token: ['timeToFirstTokenSeconds'],
  inter_token_latency: ['interTokenLatencySeconds', 'requestTimePerOutputTokenSeconds', 'timePerOutputTokenSeconds'],
  iteration_tokens: ['iterationTokensTotal'],
  request_params_n: ['requestParamsN'],
  request_num_preemptions: ['requestNumPreemptions'],
  request_tokens: [
    'requestPromptTokens',
    'requestGenerationTokens',
    'requestMaxNumGenerationTokens',
    'requestParamsMaxTokens',
    'requestPrefillKvComputedTokens',
  ],
  kv_cache_residency: ['kvBlockLifetimeSeconds', 'kvBlockIdleBeforeEvictSeconds', 'kvBlockReuseGapSeconds'],
};

/**
 * vLLM's `--custom-histogram-buckets` JSON (a string, or the object it parses to), checked as
 * `ObservabilityConfig` checks it, turned into bucket overrides by exposed family name. `fail`
 * receives vLLM's own message for the first problem.
 */
export function vllmHistogramBuckets(value: unknown, fail: (problem: string) => never): Record<string, number[]> {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch (error) {
      fail(`custom_histogram_buckets: not valid JSON (${(error as Error).message})`);
    }
  }
  if (!isPlainMapping(parsed)) fail('custom_histogram_buckets: must be a JSON mapping from bucket family to a list of bounds');
  const overrides: Record<string, number[]> = {};
  const known = Object.keys(VLLM_BUCKET_FAMILIES).sort();
  for (const [family, buckets] of Object.entries(parsed as Record<string, unknown>)) {
    if (!Array.isArray(buckets)) fail(`custom_histogram_buckets[${pyRepr(family)}]: must be a list of numbers`);
    for (const bound of buckets as unknown[]) {
      if (typeof bound === 'boolean') fail(`custom_histogram_buckets[${pyRepr(family)}]: bound ${bound ? 'True' : 'False'} must be a number, not a boolean`);
    }
    // An own key only: `constructor` or `__proto__` name no bucket family, whatever Object.prototype holds.
    const members = Object.hasOwn(VLLM_BUCKET_FAMILIES, family) ? VLLM_BUCKET_FAMILIES[family] : undefined;
    if (members === undefined) fail(`custom_histogram_buckets: unknown bucket family ${pyRepr(family)}; known families: [${known.map(pyRepr).join(', ')}]`);
    const bounds = buckets as unknown[];
    if (bounds.length === 0) fail(`custom_histogram_buckets[${pyRepr(family)}]: bucket list must not be empty`);
    for (const bound of bounds) {
      if (typeof bound !== 'number' || !Number.isFinite(bound) || bound <= 0) {
        fail(`custom_histogram_buckets[${pyRepr(family)}]: bound ${JSON.stringify(bound)} must be finite and greater than 0`);
      }
    }
    const numbers = bounds as number[];
    if (numbers.some((bound, i) => i > 0 && (numbers[i - 1] as number) >= bound)) {
      fail(`custom_histogram_buckets[${pyRepr(family)}]: bounds [${numbers.join(', ')}] must be strictly increasing`);
    }
    for (const key of members as readonly UpstreamFamilyKey[]) {
      const def = UPSTREAM_FAMILIES[key];
      overrides[exposedName('vllm:', def.baseName, def.type)] = [...numbers];
    }
  }
  return overrides;
}

/**
 * A mapping as JSON gives one: an object whose prototype is Object's (or none). An object literal
 * with a `__proto__` key sets its prototype rather than a key, and would otherwise pass as empty.
 */
function isPlainMapping(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function pyRepr(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A version string `packaging.version.parse` accepts (PEP 440, public part). */
export const PEP440_VERSION = /^v?\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?$/i;
