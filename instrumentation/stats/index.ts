// The public types use Node's (Buffer, node:http, NodeJS.ProcessEnv): with this reference, a
// project compiled with `types: []` and `skipLibCheck: false` still finds them (@types/node).
/// <reference types="node" preserve="true" />
/**
 * `omni-otel-metrics/stats`: vLLM's engine statistics in TypeScript. The records an engine
 * reports (scheduler, cache, speculative decoding, finished requests), the frontend's iteration
 * statistics built from engine-core outputs, and vLLM's periodic log line.
 */
export {
  FINISH_REASONS,
  isFinishReason,
  PrefixCacheStats,
  MultiModalCacheStats,
  SpecDecodingStats,
  PromptTokenStats,
  createSchedulerStats,
  createPrefixCacheStats,
  createMultiModalCacheStats,
  createSpecDecodingStats,
  createPrefillStats,
  createPromptTokenStats,
  createRequestStateStats,
  createFinishedRequestStats,
} from './types';
export type {
  FinishReason,
  BaseCacheStats,
  PrefixCacheCounts,
  KvCacheEvictionEvent,
  NixlKvConnectorStats,
  PerfStats,
  EngineSleepState,
  SpecDecodingCounts,
  SchedulerStats,
  PrefillStats,
  PrefillStatsInput,
  PromptTokenSource,
  RequestStateStats,
  FinishedRequestStats,
} from './types';
export { IterationStats, type EngineCoreOutputUpdate, type FinishedRequestInput, type IterationStatsOptions } from './iteration-stats';
export { RequestStatsBuilder, type ArrivedInfo, type ScheduledInfo, type RequestStatsBuilderOptions } from './request-stats-builder';
export { StatsThrottle, DEFAULT_STATS_INTERVAL_SECONDS, type StatsThrottleOptions } from './stats-throttle';
export { LoggingStatLogger, type LoggingStatLoggerOptions, type LogLineSink } from './logging-stat-logger';
export { PeriodicLogger, DEFAULT_LOG_STATS_INTERVAL_SECONDS, type PeriodicLoggerOptions, type PeriodicLoggable } from './periodic-logger';
export { CachingMetrics, type CachingMetricsOptions } from './caching-metrics';
export { monotonicSeconds, wallClockSeconds, type SecondsClock } from './clock';
