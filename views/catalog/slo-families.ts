import type { FamilyDefinition } from './family-definition';

/**
 * Service-level objectives of one request (the `slo` option): upper bounds, each optional. A request
 * is good when it finished successfully and met every declared objective that applies to it.
 */
export interface SloOptions {
  /** Arrival at the serving layer (`generate`) to the first output it streams, text or audio: vLLM's `--goodput ttft`. */
  readonly firstOutputSeconds?: number;
  /** Arrival to the finished output: vLLM's `--goodput e2el`. */
  readonly e2eSeconds?: number;
  /**
   * Mean time per output token after the first, `(e2e − first output) / (output tokens − 1)`, the
   * output tokens being the first stage's (the answer's text, as `usage.completion_tokens` counts
   * them): vLLM's `--goodput tpot`. Only for requests with 2 output tokens or more.
   */
  readonly tpotSeconds?: number;
  /** Arrival to the first audio packet; only for requests that streamed audio. */
  readonly audioTtfpSeconds?: number;
  /** Real-time factor (final stage generation time / audio duration); only for requests with audio. */
  readonly audioRtf?: number;
}

/** The `objective` label value a miss of each objective is counted under, by option key, in the order they are judged. */
export const SLO_OBJECTIVES = {
  firstOutputSeconds: 'first_output',
  e2eSeconds: 'e2e',
  tpotSeconds: 'tpot',
  audioTtfpSeconds: 'audio_ttfp',
  audioRtf: 'audio_rtf',
} as const satisfies Readonly<Record<keyof SloOptions, string>>;

export type SloObjectiveKey = keyof typeof SLO_OBJECTIVES;
/** The `objective` label of `vllm:omni_slo_misses_total`. */
export type SloObjective = (typeof SLO_OBJECTIVES)[keyof typeof SLO_OBJECTIVES];

/**
 * Goodput, live: requests that met their objectives, and the objectives missed. Registered only
 * with the `slo` option; both take the request labels of `requestLabels`. Every successfully
 * finished request lands in exactly one place: `requests_good_total`, or at least one objective of
 * `slo_misses_total`.
 */
export const SLO_FAMILIES = {
  requestsGood: {
    baseName: 'requests_good',
    type: 'counter',
    help: 'Requests that finished successfully and met every objective that applies to them, against the thresholds of the slo option (audio objectives only for requests with audio).',
    labels: ['model_name'],
    unit: '{request}',
    group: 'slo',
    eager: true,
  },
  sloMisses: {
    baseName: 'slo_misses',
    type: 'counter',
    help: 'Objectives missed by requests that finished successfully, one per objective a request missed, against the thresholds of the slo option.',
    labels: ['model_name', 'objective'],
    unit: '{request}',
    group: 'slo',
  },
} as const satisfies Record<string, FamilyDefinition>;
