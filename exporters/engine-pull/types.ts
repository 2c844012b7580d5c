/** One replica whose engine statistics come from a vLLM server's own `/metrics`. */
export interface EngineTarget {
  /** Stage index, as in `stagePools`. */
  readonly stage: number;
  /** Replica id within the stage. */
  readonly replica: number;
  /** The server's metrics URL, e.g. `http://10.0.0.7:8000/metrics` (http or https). */
  readonly url: string;
  /**
   * The `engine` label value of this replica's samples; default `0` (a server with one engine).
   * A data-parallel server prints several engines on one URL: list one target per engine, same URL.
   */
  readonly engine?: number | string;
}

/** The `enginePull` option: real vLLM servers behind the stages, whose `/metrics` are served per stage and replica. */
export interface EnginePullOptions {
  /** One entry per (stage, replica) whose vLLM engine is pulled. */
  readonly engines: readonly EngineTarget[];
  /** How long one pull of a URL may take before the engine counts as down. Default 2000. */
  readonly timeoutMillis?: number;
  /** A pull younger than this serves the next scrape or export unchanged. Default 1000. */
  readonly cacheMillis?: number;
  /**
   * Pull in the background every so often, so neither a scrape nor an OTLP export waits for the
   * engines; they read the latest pull. Default 0: pull when a scrape or export asks.
   */
  readonly intervalMillis?: number;
  /** Families other than `vllm:*` to pass through, by the name their TYPE line prints (`process_resident_memory_bytes`). */
  readonly passThrough?: readonly string[];
  /** A response larger than this counts as a failed pull (bounded memory). Default 16 MiB. */
  readonly maxResponseBytes?: number;
}
