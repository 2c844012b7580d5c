import { checkNonNegativeNumber, checkObject, checkPositiveNumber, OmniOptionError, shown } from '../../views/common/option-checks';
import { SLO_OBJECTIVES, type SloObjective, type SloObjectiveKey, type SloOptions } from '../../views/catalog/slo-families';

/** What one finished request is judged on, in seconds from its arrival. */
export interface RequestTimings {
  /** Arrival to the first output, text or audio. */
  readonly firstOutputSeconds: number;
  /** Arrival to the finished output. */
  readonly e2eSeconds: number;
  /**
   * The request's output tokens: the first stage's generation tokens, the answer's text, as an
   * OpenAI `usage.completion_tokens` counts them and vLLM's `--goodput` divides by (the talker's
   * codec tokens of a spoken answer are not among them).
   */
  readonly outputTokens: number;
  /** Arrival to the first audio packet; undefined for a request that streamed no audio. */
  readonly audioTtfpSeconds?: number;
  /** The request's audio real-time factor; undefined when it has none (no audio, or no generation time to divide). */
  readonly audioRtf?: number;
}

/** The option keys of `slo`, in judging order. */
export const SLO_KEYS = Object.keys(SLO_OBJECTIVES) as readonly SloObjectiveKey[];

/**
 * The `slo` option checked: a plain object of known keys, each a finite number above zero, at
 * least one declared. Returns a frozen copy of the declared objectives (later changes to the
 * caller's object change nothing), or undefined without the option.
 */
export function resolveSlo(value: unknown): SloOptions | undefined {
  if (value === undefined) return undefined;
  checkObject(value, 'slo', SLO_KEYS);
  const given = value as Readonly<Record<string, unknown>>;
  const declared: Partial<Record<SloObjectiveKey, number>> = {};
  for (const key of SLO_KEYS) {
    const threshold = given[key];
    checkPositiveNumber(threshold, `slo.${key}`);
    if (threshold !== undefined) declared[key] = threshold;
  }
  if (Object.keys(declared).length === 0) {
    throw new OmniOptionError('slo', `slo declares no objective: give at least one of ${SLO_KEYS.join(', ')}, or leave slo out`);
  }
  return Object.freeze(declared);
}

/**
 * A request's value for one objective, or undefined when the objective does not apply to it: the
 * time per output token needs 2 output tokens or more (vLLM's `--goodput` takes it as 0 below, which
 * always meets it), the audio objectives need audio.
 */
export function objectiveValue(key: SloObjectiveKey, request: RequestTimings): number | undefined {
  switch (key) {
    case 'firstOutputSeconds':
      return request.firstOutputSeconds;
    case 'e2eSeconds':
      return request.e2eSeconds;
    case 'tpotSeconds':
      return request.outputTokens >= 2 ? (request.e2eSeconds - request.firstOutputSeconds) / (request.outputTokens - 1) : undefined;
    case 'audioTtfpSeconds':
      return request.audioTtfpSeconds ?? undefined;
    case 'audioRtf':
      return request.audioRtf ?? undefined;
  }
}

/** Met at or below the threshold, as vLLM's `--goodput` counts a request good (`slo >= value`). */
export function meetsObjective(value: number, threshold: number): boolean {
  return value <= threshold;
}

/**
 * The objectives of `slo` a finished request missed, in judging order: empty when it is good. The
 * same rule the `slo` option counts by, for requests measured elsewhere (a load generator's own
 * timings, logs). An `slo` registration would refuse, or timings that are no durations, are
 * refused with an `OmniOptionError` naming the field.
 */
export function missedObjectives(slo: SloOptions, request: RequestTimings): SloObjective[] {
  // resolveSlo reads undefined as "no slo option"; here an slo is required.
  if (slo === undefined) checkObject(slo, 'slo', SLO_KEYS);
  const objectives = resolveSlo(slo) as SloOptions;
  checkTimings(request);
  const missed: SloObjective[] = [];
  for (const key of SLO_KEYS) {
    const threshold = objectives[key];
    if (threshold === undefined) continue;
    const value = objectiveValue(key, request);
    if (value !== undefined && !meetsObjective(value, threshold)) missed.push(SLO_OBJECTIVES[key]);
  }
  return missed;
}

const REQUIRED_TIMINGS = ['firstOutputSeconds', 'e2eSeconds', 'outputTokens'] as const;

/** Every required timing a finite number ≥ 0; the audio ones too when given (null reads as none, as in JSON). */
function checkTimings(request: unknown): void {
  if (typeof request !== 'object' || request === null) {
    throw new OmniOptionError('request', `request must be an object of timings; got ${shown(request)}`);
  }
  const timings = request as Readonly<Record<string, unknown>>;
  for (const key of REQUIRED_TIMINGS) {
    if (timings[key] === undefined) throw new OmniOptionError(`request.${key}`, `request.${key} is required; got undefined`);
    checkNonNegativeNumber(timings[key], `request.${key}`);
  }
  checkNonNegativeNumber(timings.audioTtfpSeconds ?? undefined, 'request.audioTtfpSeconds');
  checkNonNegativeNumber(timings.audioRtf ?? undefined, 'request.audioRtf');
}
