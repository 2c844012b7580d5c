import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { LimitedWarning } from '../../views/common/diag-warnings';
import type { StageReplica } from '../../views/stage-replica-map';
import type { IterationStats } from '../stats/iteration-stats';
import type { FinishReason } from '../stats/types';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOKEN_TYPE,
  GEN_AI_METRICS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_PROVIDER_NAME_VALUE_VLLM,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
  type GenAiMetricDefinition,
} from '../../views/catalog/gen-ai-families';

/**
 * The meter of the GenAI histograms. It is not the catalog's meter, so the catalog's views (and
 * their renames) never touch these streams.
 */
export const GEN_AI_METER_NAME = 'omni-otel-metrics/gen-ai';

/** Finish reasons that end a request in error: `error.type` on its duration, and no TPOT sample. */
const ERROR_REASONS: ReadonlySet<FinishReason> = new Set<FinishReason>(['abort', 'error']);

/** The attribute sets of one replica, built once when it first reports. */
interface ReplicaAttributes {
  readonly base: Attributes;
  readonly input: Attributes;
  readonly output: Attributes;
  readonly errors: Map<string, Attributes>;
}

/**
 * GenAI semantic-convention server metrics (`gen_ai.server.*`, `gen_ai.client.token.usage`)
 * derived from the same per-iteration observations as vLLM's families: TTFTs, and per finished
 * request its e2e latency, mean time per output token and token counts. Fed by `OmniStatLogger`.
 */
export class OmniGenAiMetrics {
  private readonly timeToFirstToken: Histogram;
  private readonly timePerOutputToken: Histogram;
  private readonly requestDuration: Histogram;
  private readonly tokenUsage: Histogram;
  /** Keyed by the stage/replica map's own objects; weakly, so objects a caller makes per call are not kept. */
  private readonly replicas = new WeakMap<StageReplica, ReplicaAttributes>();
  private readonly failedCalls = new LimitedWarning();

  /** @internal */
  constructor(
    meter: Meter,
    private readonly modelName: string,
  ) {
    this.timeToFirstToken = histogram(meter, GEN_AI_METRICS.timeToFirstToken);
    this.timePerOutputToken = histogram(meter, GEN_AI_METRICS.timePerOutputToken);
    this.requestDuration = histogram(meter, GEN_AI_METRICS.requestDuration);
    this.tokenUsage = histogram(meter, GEN_AI_METRICS.tokenUsage);
  }

  /**
   * One iteration of one replica. Never throws into the caller: an engine or stats object it
   * cannot read (not the shapes `OmniStatLogger` hands over, a getter or iterator that throws)
   * ends the call with a rate-limited warning, keeping what was recorded before.
   * @internal
   */
  recordIteration(engine: StageReplica, stats: IterationStats): void {
    try {
      const attributes = this.attributesOf(engine);
      for (const ttft of stats.timeToFirstTokensIter) this.timeToFirstToken.record(ttft, attributes.base);
      for (const finished of stats.finishedRequests) {
        const failed = ERROR_REASONS.has(finished.finishReason);
        this.requestDuration.record(finished.e2eLatency, failed ? this.errorAttributes(attributes, finished.finishReason) : attributes.base);
        if (!failed) this.timePerOutputToken.record(finished.meanTimePerOutputToken, attributes.base);
        this.tokenUsage.record(finished.numPromptTokens, attributes.input);
        this.tokenUsage.record(finished.numGenerationTokens, attributes.output);
      }
    } catch {
      this.failedCalls.warn('OmniGenAiMetrics.recordIteration dropped a call: the engine or stats object it was given could not be read');
    }
  }

  private attributesOf(engine: StageReplica): ReplicaAttributes {
    let attributes = this.replicas.get(engine);
    if (attributes === undefined) {
      if (typeof engine !== 'object' || engine === null || !isLabelValue(engine.stage) || !isLabelValue(engine.replica)) {
        throw new TypeError('not a stage/replica of the stage/replica map');
      }
      const base = Object.freeze({
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
        [ATTR_GEN_AI_PROVIDER_NAME]: GEN_AI_PROVIDER_NAME_VALUE_VLLM,
        [ATTR_GEN_AI_REQUEST_MODEL]: this.modelName,
        stage: engine.stage,
        replica: engine.replica,
      });
      attributes = {
        base,
        input: Object.freeze({ ...base, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_INPUT }),
        output: Object.freeze({ ...base, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_OUTPUT }),
        errors: new Map(),
      };
      this.replicas.set(engine, attributes);
    }
    return attributes;
  }

  private errorAttributes(attributes: ReplicaAttributes, reason: string): Attributes {
    let withError = attributes.errors.get(reason);
    if (withError === undefined) {
      withError = Object.freeze({ ...attributes.base, [ATTR_ERROR_TYPE]: reason });
      attributes.errors.set(reason, withError);
    }
    return withError;
  }
}

function isLabelValue(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number';
}

function histogram(meter: Meter, definition: GenAiMetricDefinition): Histogram {
  return meter.createHistogram(definition.name, {
    description: definition.description,
    unit: definition.unit,
    advice: { explicitBucketBoundaries: [...definition.buckets] },
  });
}
