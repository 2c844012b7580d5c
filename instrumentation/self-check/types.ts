/**
 * Public shapes of the self-check: which registered families received nothing while requests
 * flowed, and the likely reason.
 */

export interface SilentFamily {
  /** The exact exposed name (`vllm:omni_transfer_tx_s`, `vllm:prompt_tokens_total`). */
  readonly name: string;
  /**
   * Why the family is silent, most specific first:
   * - `log-stats-off`: `logStats` is off, so the pipeline recorders drop every observation (vLLM-Omni's gating);
   * - `host-method-not-called`: the hooks are attached but the host method that feeds the family was never called
   *   (the host class lacks it, or never calls it);
   * - `replica-not-polled`: the family has data from other replicas, but these (stage, replica) pairs were never polled;
   * - `no-data-from-source`: its source ran (or no hooks are attached to tell) and still nothing arrived: stats
   *   missing from what the host returns, discarded, or throttled.
   */
  readonly reason: 'log-stats-off' | 'host-method-not-called' | 'replica-not-polled' | 'no-data-from-source';
  /** What feeds the family: the host method(s) and the field or stats it reads. */
  readonly source: string;
  /** One sentence: what was seen and what to check. */
  readonly detail: string;
  /** Checks in a row, with requests flowing, in which the family received nothing. */
  readonly silentChecks: number;
  /** Wall-clock milliseconds of the check that last saw data for the family; absent when it never had any. */
  readonly lastObservedAt?: number;
  /** For `host-method-not-called`: the host method never called (one of the host contract's, whose calls the hooks count). */
  readonly method?: 'addRequest' | 'cleanupRequest' | 'submitToStage' | 'pollEngine' | 'sendToNextStage' | 'receiveFromPreviousStage' | 'generate' | 'abort';
  /** For `replica-not-polled`: the replicas without data, in engine order, as their `stage` / `replica` labels print. */
  readonly replicas?: ReadonlyArray<{ readonly stage: string; readonly replica: string }>;
}

/** Why a family is silent (see `SilentFamily.reason`). */
export type SilenceReason = SilentFamily['reason'];

/** The host methods of the host contract whose calls the hooks count (one count per host call). */
export type HostMethod = NonNullable<SilentFamily['method']>;

/** One replica, as its `stage` / `replica` labels print. */
export type StageReplicaRef = NonNullable<SilentFamily['replicas']>[number];

/** What `handle.selfCheck()` found: the families that should have data and have none, and why. */
export interface SelfCheckReport {
  /** Wall-clock milliseconds of this check. */
  readonly checkedAt: number;
  /** Requests seen since registration (finished by the pipeline counters, or started through the hooks). */
  readonly requestsObserved: number;
  /** Whether requests flowed since the previous check. */
  readonly requestsFlowed: boolean;
  /**
   * Whether `OmniInstrumentation` hooks feed this handle now: false again once they are disabled,
   * shut down with the handle or unpatched (host-method reasons still use the counts they left).
   */
  readonly hooksAttached: boolean;
  /** Silent families in catalog order (the exposition's order); replica entries follow their family's. */
  readonly silent: readonly SilentFamily[];
  /** Replicas that neither were polled nor produced any engine statistics while requests flowed, in engine order. */
  readonly unpolledReplicas: NonNullable<SilentFamily['replicas']>;
}

/** `selfCheck` option of `registerOmniMetrics`: the periodic warning and the shutdown summary. */
export interface SelfCheckOptions {
  /** Seconds between periodic checks; default 60. A family silent at two checks in a row is warned about once. */
  readonly intervalSeconds?: number;
}
