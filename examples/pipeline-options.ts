/** Replica counts of the reference pipeline's stages, in order. */
export const STAGE_COUNT = 3;
export const DEFAULT_REPLICAS: readonly number[] = Object.freeze([1, 2, 1]);
/** More replicas than this per stage is almost certainly a typo (and would cost a lot of series). */
export const MAX_REPLICAS_PER_STAGE = 64;

/** Replicas of the image stage when none are asked for. */
export const DEFAULT_IMAGE_REPLICAS = 1;

/** Checks the image stage's replica count: 0 (no image stage) to the per-stage maximum. */
export function validateImageReplicas(count: number): number {
  if (!Number.isInteger(count) || count < 0 || count > MAX_REPLICAS_PER_STAGE) {
    throw new RangeError(`imageReplicas must be an integer from 0 to ${MAX_REPLICAS_PER_STAGE}; got ${String(count)}`);
  }
  return count;
}

/** Checks replica counts: one positive integer per stage (thinker, talker, code2wav). */
export function validateReplicas(replicas: readonly number[]): readonly number[] {
  if (replicas.length !== STAGE_COUNT || replicas.some((n) => !Number.isInteger(n) || n < 1 || n > MAX_REPLICAS_PER_STAGE)) {
    throw new RangeError(
      `replicas must be ${STAGE_COUNT} integers from 1 to ${MAX_REPLICAS_PER_STAGE} (thinker, talker, code2wav); got [${replicas.join(', ')}]`,
    );
  }
  return replicas;
}

/** Parses `REPLICAS` (e.g. `1,2,1`) with an error that says what is wrong and what is expected. */
export function parseReplicas(text: string): readonly number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length !== STAGE_COUNT || parts.some((part) => !/^\d+$/.test(part))) {
    throw new RangeError(`REPLICAS must be ${STAGE_COUNT} comma-separated positive integers (thinker,talker,code2wav), e.g. "1,2,1"; got "${text}"`);
  }
  return validateReplicas(parts.map(Number));
}

/** Parses `IMAGE_REPLICAS` (e.g. `2`; `0` serves no images). */
export function parseImageReplicas(text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new RangeError(`IMAGE_REPLICAS must be a non-negative integer; got "${text}"`);
  return validateImageReplicas(Number(text.trim()));
}

/** Parses a TCP port variable; 0 asks the OS for a free one. */
export function parsePort(name: string, text: string): number {
  const port = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || port > 65535) throw new RangeError(`${name} must be an integer from 0 to 65535; got "${text}"`);
  return port;
}

export function parseSeed(text: string): number {
  const seed = Number(text.trim());
  if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(seed)) throw new RangeError(`SEED must be an integer; got "${text}"`);
  return seed;
}
