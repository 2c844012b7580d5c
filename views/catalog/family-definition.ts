/**
 * The shape of one entry in the metric catalog. Every family the package can expose is described
 * exactly once with this type; instruments, views, exposition metadata, docs tables and the
 * per-family tests are all derived from these entries.
 */

/** Prometheus family type. Info families are gauges whose value is always 1 (or a timestamp). */
export type FamilyType = 'counter' | 'gauge' | 'histogram';

/** Named bucket sets that are computed from configuration rather than listed. */
export type DerivedBuckets = 'request_tokens';

/**
 * When a family is registered.
 * - `pipeline`: the `vllm:omni_*` families; declared even with `logStats` off (their recorders no-op).
 * - `core`: upstream families vLLM always registers; only with `logStats` on.
 * - the rest: upstream families vLLM registers only when the feature is configured.
 * - `hidden`: deprecated upstream names, only with `showHiddenMetrics` (or, as vLLM decides it,
 *   `showHiddenMetricsForVersion`).
 * - `process`: the process and Node.js runtime families, only with `processMetrics`.
 */
export type FamilyGroup =
  | 'pipeline'
  | 'core'
  | 'specDecode'
  | 'kvConnector'
  | 'kvOffload'
  | 'simpleKvOffload'
  | 'lora'
  | 'kvCacheResidency'
  | 'corruptedRequests'
  // the stage-name info family; only with the `stageNames` option
  | 'stageNames'
  // the goodput counters; only with the `slo` option
  | 'slo'
  | 'hidden'
  | 'process'
  // families a user adds through the config file; always registered
  | 'custom';

export interface FamilyDefinition {
  /**
   * Name without the namespace prefix. Counters leave off `_total` (the exposition adds it, as
   * prometheus_client does); a histogram whose name happens to end in `_total` keeps it.
   */
  readonly baseName: string;
  readonly type: FamilyType;
  /** HELP text, byte-for-byte as the upstream project prints it. */
  readonly help: string;
  /**
   * Label names as the upstream project declares them. Upstream `engine` is rewritten to
   * `stage` + `replica` when the catalog is resolved.
   */
  readonly labels: readonly string[];
  /** Upper bounds (the implicit `+Inf` excluded), or the name of a derived set. Histograms only. */
  readonly buckets?: readonly number[] | DerivedBuckets;
  /** UCUM unit used only by the `otel` naming scheme; the `vllm` scheme never sets a unit. */
  readonly unit: string;
  readonly group: FamilyGroup;
  /** Info family: a gauge set to 1 whose labels carry the information (labels beyond `labels` come from config). */
  readonly info?: boolean;
  /** The one label set bound at construction, exposed with zero values before any record (seed design). */
  readonly eager?: boolean;
  /** Deprecated upstream name: the family that replaces it. */
  readonly deprecatedFor?: string;
  /**
   * Hidden upstream family: the vLLM minor release (`'0.12'`) whose code prints it only with
   * `--show-hidden-metrics-for-version` naming the release before; the next release deleted it.
   */
  readonly hiddenIn?: string;
  /** A counter or histogram the upstream client builds without a creation time: it prints no `_created`. */
  readonly omitCreated?: boolean;
  /**
   * How the `node:cluster` primary merges this gauge over its live workers, where the rule by unit
   * (counts summed, everything else the max) would be wrong: a process's memory adds up, its start
   * time does not.
   */
  readonly clusterMerge?: 'sum' | 'max' | 'min';
}
