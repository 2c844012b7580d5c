// The public types use Node's (Buffer, node:http, NodeJS.ProcessEnv): with this reference, a
// project compiled with `types: []` and `skipLibCheck: false` still finds them (@types/node).
/// <reference types="node" preserve="true" />
/**
 * `omni-otel-metrics/views`: the catalog and what is built on it. Every family's name, HELP,
 * type, labels and buckets; the views for instruments of your own under those names; the series
 * store and its producer for readers you wire yourself.
 */
export { resolveCatalog, resolveFullCatalog, DEFAULT_MAX_MODEL_LEN } from './catalog';
export type { CatalogOptions, CustomFamily, FamilyKey, FeatureOptions, ResolvedCatalog, ResolvedFamily } from './catalog';
export type { FamilyDefinition, FamilyGroup, FamilyType, DerivedBuckets } from './family-definition';
export { PIPELINE_FAMILIES, type PipelineFamilyKey } from './pipeline-families';
export { UPSTREAM_FAMILIES, type UpstreamFamilyKey } from './upstream-families';
export { GEN_AI_METRICS, type GenAiMetricDefinition } from './gen-ai-families';
export { FAILURE_REASONS, type FailureReason } from './stage-service-families';
export { SLO_OBJECTIVES, type SloObjective, type SloOptions } from './slo-families';
export { PROCESS_FAMILIES, GC_KINDS, GC_DURATION_BUCKETS, type ProcessFamilyKey, type GcKind } from './process-families';
export {
  SECONDS_BUCKETS,
  SECONDS_FAST_BUCKETS,
  RTF_BUCKETS,
  BYTES_BUCKETS,
  REQUEST_LATENCY_BUCKETS,
  TIME_TO_FIRST_TOKEN_BUCKETS,
  INTER_TOKEN_LATENCY_BUCKETS,
  ITERATION_TOKENS_BUCKETS,
  REQUEST_PARAMS_N_BUCKETS,
  REQUEST_NUM_PREEMPTIONS_BUCKETS,
  KV_CACHE_RESIDENCY_BUCKETS,
  build125Buckets,
} from './buckets';
export { GEN_AI_TIME_TO_FIRST_TOKEN_BUCKETS, GEN_AI_TIME_PER_OUTPUT_TOKEN_BUCKETS, GEN_AI_DURATION_BUCKETS, GEN_AI_TOKEN_BUCKETS } from './gen-ai-families';
export { DEFAULT_PIPELINE_PREFIX, PIPELINE_PREFIXES, type PipelinePrefix } from './names';
export { StageReplicaMap, type ReplicaChange, type ReplicaChangeListener, type StageReplica } from './stage-replica-map';
export { EngineRelabelProcessor } from './engine-relabel-processor';
export { createOmniViews, OMNI_METER_NAME, PACKAGE_VERSION, type NamingScheme, type OmniViewsOptions } from './views';
export { declaredFamilies, type DeclaredFamily } from './declared-families';
export { loadMetricsConfig, validateMetricsConfig, MetricsConfigError, type MetricsConfig } from './metrics-config';
export { formatGoFloat } from './go-float';
export { SeriesStore, DEFAULT_CARDINALITY_LIMIT, type SeriesStoreOptions } from './store/series-store';
export { FamilySeries, OVERFLOW_ATTRIBUTE, type LabelValue } from './store/family-series';
export type { BoundSeries } from './store/series';
export { OmniMetricProducer, type OmniMetricProducerOptions } from './store/metric-producer';
