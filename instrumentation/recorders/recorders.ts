import { packageDiag } from '../../views/common/package-diag';
import { type MeterProvider } from '@opentelemetry/api';
import type { FeatureOptions, ResolvedCatalog } from '../../views/catalog/catalog';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import { PACKAGE_VERSION, type NamingScheme } from '../../views/views';
import { optionKeys } from '../../views/common/option-checks';
import { OmniCustomMetrics } from './custom-metrics';
import { GEN_AI_METER_NAME, OmniGenAiMetrics } from './gen-ai-metrics';
import { OmniDiffusionMetrics } from './diffusion-metrics';
import { OmniModalityMetrics } from './modality-metrics';
import { OmniPrometheusMetrics } from './pipeline-metrics';
import { OmniRealtimeVadMetrics } from './realtime-vad-metrics';
import { OmniRequestLabelledMetrics } from './request-labelled-metrics';
import type { RequestLabelSettings } from './request-labels';
import type { SloOptions } from '../../views/catalog/slo-families';
import { OmniSloMetrics } from './slo-metrics';
import { OmniStageReplicaMetrics } from './stage-replica-metrics';
import { OmniStageServiceMetrics } from './stage-service-metrics';
import { OmniStatLogger, type CacheConfigInfo } from './stat-logger';
import { OmniTransferMetrics } from './transfer-metrics';

/** Everything recorders need besides a meter; settled once by `registerOmniMetrics`. */
export interface RecorderSettings {
  readonly catalog: ResolvedCatalog;
  readonly naming: NamingScheme;
  readonly modelName: string;
  readonly logStats: boolean;
  readonly stageReplicaMap: StageReplicaMap;
  readonly features?: FeatureOptions;
  readonly cacheConfig?: CacheConfigInfo;
  readonly logIntervalSeconds?: number;
  readonly logSink?: { info(line: string): void; debug?(line: string): void };
  /** Also record the GenAI semconv histograms (needs `logStats`: they come from the stat logger's observations). */
  readonly genAiMetrics?: boolean;
  /** Per-request labels on the request families (`requestLabels`); the catalog must carry their names. */
  readonly requestLabels?: readonly RequestLabelSettings[];
  /** Objectives each finished request is judged on (the `slo` option, checked); the catalog must carry the goodput families. */
  readonly slo?: SloOptions;
}

/** The recorders of one pipeline. */
export interface OmniRecorders {
  /** Pipeline-level requests: running / waiting, completions by reason, e2e latency, token totals. */
  readonly pipeline: OmniPrometheusMetrics;
  /** Audio per stage and replica: time to first packet, duration, real-time factor, frames, underrun / continuity, silent loss. */
  readonly audio: OmniModalityMetrics;
  /** Per-stage generation time and queueing, failures by reason, KV-transfer waits, the image workload. */
  readonly stageService: OmniStageServiceMetrics;
  /** Diffusion timing breakdowns and image time to first output, per stage and replica. */
  readonly diffusion: OmniDiffusionMetrics;
  /** Cross-stage transfers, one observation per hop between two replicas. */
  readonly transfer: OmniTransferMetrics;
  /** Per-replica queue gauges: outputs waiting, requests in flight. */
  readonly stageReplica: OmniStageReplicaMetrics;
  /** Realtime sessions with server-side VAD. */
  readonly realtimeVad: OmniRealtimeVadMetrics;
  /**
   * The families declared under `families:` in `configFile`, recorded through the store like the
   * catalog's own: `custom.counter(name).add(value, labels)`, `custom.gauge(name).set(…)`,
   * `custom.histogram(name).observe(…)`; `model_name` is filled in. Not gated by `logStats`.
   */
  readonly custom: OmniCustomMetrics;
  /** Upstream `vllm:*` statistics; present only when `logStats` is on. */
  readonly statLogger?: OmniStatLogger;
  /** GenAI semconv histograms; present only with `genAiMetrics` and `logStats` on. */
  readonly genAi?: OmniGenAiMetrics;
  /** The request families by request label (tenant, priority); present only with `requestLabels`. */
  readonly requestLabelled?: OmniRequestLabelledMetrics;
  /** Goodput: finished requests judged against the objectives; present only with the `slo` option. */
  readonly slo?: OmniSloMetrics;
}

/**
 * The name of every recorder of a set, optional ones included: the compiler refuses a list that
 * misses one, so a recorder added to `OmniRecorders` cannot be left out of `recordersOf`.
 */
const RECORDER_NAMES = optionKeys<OmniRecorders>({
  pipeline: true,
  audio: true,
  stageService: true,
  diffusion: true,
  transfer: true,
  stageReplica: true,
  realtimeVad: true,
  custom: true,
  statLogger: true,
  genAi: true,
  requestLabelled: true,
  slo: true,
}) as ReadonlyArray<keyof OmniRecorders>;

/**
 * The recorders of `source` (a handle) in an object of their own, which the hooks read on every
 * call they observe: the handle is a dictionary-mode object to V8 (its `meterProvider` accessor
 * makes it one), where each read is a hash lookup; this copy has fast, fixed-offset properties.
 */
export function recordersOf(source: OmniRecorders): OmniRecorders {
  const recorders: Partial<Record<keyof OmniRecorders, unknown>> = {};
  for (const name of RECORDER_NAMES) recorders[name] = source[name];
  return recorders as OmniRecorders;
}

/** Stops what a recorder set runs in the background: log timers, replica-change subscriptions. */
export function stopRecorders(recorders: OmniRecorders): void {
  recorders.statLogger?.stop();
  recorders.stageService.stop();
}

/**
 * The recorders of one pipeline, bound to `store` (the catalog's families). `meterProvider`
 * receives only what lives outside the catalog: the GenAI semconv histograms.
 */
export function createRecorders(store: SeriesStore, settings: RecorderSettings, meterProvider: MeterProvider): OmniRecorders {
  const options = { modelName: settings.modelName, logStats: settings.logStats };
  if (settings.genAiMetrics && !settings.logStats) {
    packageDiag.info('omni-otel-metrics: genAiMetrics needs logStats (they derive from the upstream stats); no GenAI metrics are recorded');
  }
  const genAi =
    settings.genAiMetrics && settings.logStats
      ? new OmniGenAiMetrics(meterProvider.getMeter(GEN_AI_METER_NAME, PACKAGE_VERSION), settings.modelName)
      : undefined;
  return {
    pipeline: new OmniPrometheusMetrics(store, options),
    audio: new OmniModalityMetrics(store, options),
    stageService: new OmniStageServiceMetrics(store, options, settings.stageReplicaMap),
    diffusion: new OmniDiffusionMetrics(store, options),
    transfer: new OmniTransferMetrics(store, options),
    stageReplica: new OmniStageReplicaMetrics(store, settings.modelName),
    realtimeVad: new OmniRealtimeVadMetrics(store, options),
    custom: new OmniCustomMetrics(store, settings.modelName),
    statLogger: settings.logStats
      ? new OmniStatLogger(store, {
          modelName: settings.modelName,
          stageReplicaMap: settings.stageReplicaMap,
          features: settings.features,
          cacheConfig: settings.cacheConfig,
          logIntervalSeconds: settings.logIntervalSeconds,
          logSink: settings.logSink,
          genAi,
        })
      : undefined,
    genAi,
    requestLabelled:
      settings.requestLabels !== undefined && settings.requestLabels.length > 0
        ? new OmniRequestLabelledMetrics(store, options, settings.requestLabels)
        : undefined,
    slo: settings.slo === undefined ? undefined : new OmniSloMetrics(store, options, settings.slo),
  };
}
