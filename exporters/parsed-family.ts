/**
 * A Prometheus text exposition as read: families with their samples, as the engine-pull parser
 * produces them and the protobuf exposition encodes them.
 */

export type ParsedType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface ParsedSample {
  /** The sample's own name (`vllm:e2e_request_latency_seconds_bucket`). */
  readonly name: string;
  /** Label values unescaped; a plain data object (built with `Object.fromEntries`). */
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  /** The name of the TYPE line (counters: with `_total`, as prometheus_client prints it), or of the sample for untyped ones. */
  readonly name: string;
  readonly type: ParsedType;
  /** HELP unescaped; `''` when the family has none. */
  readonly help: string;
  readonly samples: readonly ParsedSample[];
  /** Samples read but not kept: their series came after the family's `maxSeriesPerFamily` series. */
  readonly droppedSamples?: number;
}
