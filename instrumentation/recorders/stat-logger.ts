import { packageDiag } from '../../views/package-diag';
import type { FeatureOptions } from '../../views/catalog';
import { LimitedWarning, WarnOnce } from '../../views/diag-warnings';
import { checkObject, optionKeys } from '../../views/option-checks';
import type { StageReplica, StageReplicaMap } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import { NOOP_SERIES } from '../../views/store/series';
import type { IterationStats } from '../stats/iteration-stats';
import { LoggingStatLogger, type IterationStatsSummary } from '../stats/logging-stat-logger';
import { DEFAULT_LOG_STATS_INTERVAL_SECONDS, PeriodicLogger } from '../stats/periodic-logger';
import { isFinishReason, type SchedulerStats } from '../stats/types';
import { pythonFloatRepr } from '../../views/go-float';
import { LABEL_NAME_PATTERN } from '../../views/names';
import { UnreadableInput } from './never-throw';
import { bindEngineSeries, type EngineSeries } from './engine-series';
import { AdmissionRejections } from './admission-rejections';
import { recordKvOffload, recordSimpleKvOffload } from './kv-offload-recorder';

/** vLLM's `CacheConfig.metrics_info()`: field name → value, exposed as `vllm:cache_config_info` labels. */
export type CacheConfigInfo = Readonly<Record<string, string | number | boolean | null>>;

export interface OmniStatLoggerOptions {
  readonly modelName: string;
  readonly stageReplicaMap: StageReplicaMap;
  readonly features?: FeatureOptions;
  /** Published as `vllm:cache_config_info` for every engine at construction (vLLM: engine initialized). */
  readonly cacheConfig?: CacheConfigInfo;
  /** Seconds between periodic log lines; 0 disables them. Default 10 (vLLM's VLLM_LOG_STATS_INTERVAL). */
  readonly logIntervalSeconds?: number;
  readonly logSink?: { info(line: string): void; debug?(line: string): void };
  /** Wall clock in seconds, for the LoRA info gauge; injectable for tests. */
  readonly wallClock?: () => number;
  /** Also handed every iteration's stats, after the vLLM families (the GenAI semconv recorder). */
  readonly genAi?: IterationStatsSink;
}

/**
 * Receives the per-request observations of each iteration, for metrics derived from the same values.
 * The stats object is the hooks' own and is refilled by the next poll: read it during the call.
 */
export interface IterationStatsSink {
  recordIteration(engine: StageReplica, stats: IterationStats): void;
}

const STAT_LOGGER_OPTION_KEYS = optionKeys<OmniStatLoggerOptions>({
  modelName: true,
  stageReplicaMap: true,
  features: true,
  cacheConfig: true,
  logIntervalSeconds: true,
  logSink: true,
  wallClock: true,
  genAi: true,
});

/** One engine's series and, with periodic logging on, the logger of its log lines. */
interface EngineRecord {
  readonly series: EngineSeries;
  logger: LoggingStatLogger | undefined;
}

declare const engineEntryBrand: unique symbol;

/** One engine's place in a stat logger, from `engineEntry()`: opaque, handed back to `recordEngine()`. */
export interface EngineEntry {
  readonly [engineEntryBrand]: true;
}

/**
 * The upstream `vllm:*` families per (stage, replica): vLLM's `PrometheusStatLogger` with the
 * `engine` label reshaped, as vLLM-Omni's `OmniPrometheusStatLogger`. Every replica's series
 * are created at construction, as vLLM creates each engine's at start (an idle scrape shows them
 * at zero, each replica reported awake). Never throws into the caller.
 */
export class OmniStatLogger {
  /** Per engine index: its series and its log-line logger (the hooks' feed looks each up once, `engineEntry`). */
  private readonly engines = new Map<number, EngineRecord>();
  private readonly periodic?: PeriodicLogger;
  private cacheConfigLabels: Readonly<Record<string, string>> | undefined;
  private readonly unsubscribe: () => void;
  private readonly unknownEngines = new WarnOnce();
  private readonly invalidCacheConfig = new LimitedWarning();
  private readonly unreadable = new UnreadableInput('OmniStatLogger');
  /** The one warning per public method whose call failed (the boundary every public method ends at). */
  private readonly failedCalls = new WarnOnce();
  private readonly wallClock: () => number;
  private genAi: IterationStatsSink | undefined;
  private admissionRejections: AdmissionRejections | undefined;
  private readonly decodeSummary = { promptTokenStats: Object.freeze({ computed: 0 }), numGenerationTokens: 0, numCorruptedReqs: 0, numPreemptedReqs: 0 };

  constructor(
    private readonly store: SeriesStore,
    private readonly options: OmniStatLoggerOptions,
  ) {
    checkObject(options, 'OmniStatLogger options', STAT_LOGGER_OPTION_KEYS);
    this.wallClock = options.wallClock ?? (() => Date.now() / 1000);
    this.genAi = options.genAi;
    const interval = options.logIntervalSeconds ?? DEFAULT_LOG_STATS_INTERVAL_SECONDS;
    if (!(interval >= 0)) throw new RangeError(`logIntervalSeconds must be >= 0, got ${String(interval)}`);
    const entries = options.stageReplicaMap.entries();
    const bound = bindEngineSeries(
      store,
      options.modelName,
      entries.map(([, engine]) => engine),
      options.features,
    );
    entries.forEach(([engineIdx], i) => this.engines.set(engineIdx, { series: bound[i] as EngineSeries, logger: undefined }));
    for (const { series } of this.engines.values()) this.recordSleepStateOn(series, false, 0);
    if (options.cacheConfig) {
      validateCacheConfig(options.cacheConfig);
      this.logEngineInitialized(options.cacheConfig);
    }
    this.periodic =
      interval > 0
        ? new PeriodicLogger({ intervalSeconds: interval, onError: (error) => packageDiag.warn('omni-otel-metrics: periodic stats log failed', error) })
        : undefined;
    for (const [engineIdx, engine] of entries) this.addLoggingLogger(this.engines.get(engineIdx), engine);
    this.unsubscribe = options.stageReplicaMap.onChange((change) =>
      change.kind === 'added' ? this.addEngine(change.engineIndex) : this.removeEngine(change.engineIndex),
    );
  }

  /**
   * A replica joined (called by the stage/replica map): its series are created at zero, reported
   * awake and, with a cache config, initialized, as a vLLM engine starting up.
   */
  addEngine(engineIdx: number): void {
    try {
      const engine = this.options.stageReplicaMap.lookup(engineIdx);
      if (engine === undefined || this.engines.has(engineIdx)) return;
      const [series] = bindEngineSeries(this.store, this.options.modelName, [engine], this.options.features);
      if (series === undefined) return;
      const entry: EngineRecord = { series, logger: undefined };
      this.engines.set(engineIdx, entry);
      this.recordSleepStateOn(series, false, 0);
      if (this.cacheConfigLabels) this.store.bind('upstream.cacheConfigInfo', [engine.stage, engine.replica], this.cacheConfigLabels).record(1);
      this.addLoggingLogger(entry, engine);
    } catch (error) {
      this.dropped('addEngine', error);
    }
  }

  /** A replica left (called by the stage/replica map): its stats are no longer recorded or logged; the store drops its series. */
  removeEngine(engineIdx: number): void {
    try {
      const logger = this.engines.get(engineIdx)?.logger;
      this.engines.delete(engineIdx);
      if (logger !== undefined) this.periodic?.delete(logger);
    } catch (error) {
      this.dropped('removeEngine', error);
    }
  }

  /**
   * Hands every later iteration's stats to `sink` instead (the GenAI histograms rebuilt on the
   * meter provider an SDK gave the instrumentation); nothing else of the logger changes.
   */
  useGenAi(sink: IterationStatsSink | undefined): void {
    this.genAi = sink;
  }

  get stageReplicaMap(): StageReplicaMap {
    return this.options.stageReplicaMap;
  }

  /**
   * One poll of one replica: scheduler stats (gauges, cache counters, feature families) and/or
   * iteration stats (tokens, latencies, finished requests), for flat engine index `engineIdx`.
   */
  record(schedulerStats: SchedulerStats | null | undefined, iterationStats: IterationStats | null | undefined, engineIdx: number): void {
    this.recordInto(this.engine(engineIdx), engineIdx, schedulerStats, iterationStats);
  }

  /**
   * The entry `record` finds for `engineIdx` (warning once when there is none), for a caller that
   * records many polls of one engine: it looks the entry up once, not on every poll. The entry
   * is the engine's while it is in the stage/replica map.
   */
  engineEntry(engineIdx: number): EngineEntry | undefined {
    return this.engine(engineIdx) as unknown as EngineEntry | undefined;
  }

  /** `record` into an entry `engineEntry` gave for `engineIdx` (nothing when it gave none). */
  recordEngine(
    entry: EngineEntry | undefined,
    engineIdx: number,
    schedulerStats: SchedulerStats | null | undefined,
    iterationStats: IterationStats | null | undefined,
  ): void {
    this.recordInto(entry as unknown as EngineRecord | undefined, engineIdx, schedulerStats, iterationStats);
  }

  /**
   * A decode output's inter-token latency, recorded as it comes. The hooks' feed applies a poll's
   * decode outputs at once, with no `IterationStats` (nothing but these families reads their
   * latencies); `recordDecodeStep` then records the rest of the poll.
   */
  recordInterTokenLatency(entry: EngineEntry, latency: number): void {
    try {
      const series = (entry as unknown as EngineRecord).series;
      series.interTokenLatencySeconds.record(latency);
      // The deprecated twin is hidden unless asked for.
      const timePerOutputToken = series.timePerOutputTokenSeconds;
      if (timePerOutputToken !== NOOP_SERIES) timePerOutputToken.record(latency);
    } catch (error) {
      // Not an entry `engineEntry` gave (the series the latency would go to cannot be found).
      this.dropped('recordInterTokenLatency', error);
    }
  }

  /**
   * A poll whose outputs were all decode steps, their latencies recorded by
   * `recordInterTokenLatency`: records what `recordEngine` records of the same poll given an
   * iteration of `tokens` generated tokens and nothing else. Most polls are such steps: this path
   * is kept apart from `recordInto`, and small enough that V8 inlines it with what it calls.
   */
  recordDecodeStep(entry: EngineEntry | undefined, engineIdx: number, schedulerStats: SchedulerStats | null | undefined, tokens: number): void {
    const record = entry as unknown as EngineRecord | undefined;
    if (record === undefined) return;
    try {
      const series = record.series;
      if (schedulerStats) this.recordSchedulerStep(engineIdx, series, schedulerStats);
      // What `recordIteration` records of an iteration of decode tokens only (the GenAI
      // histograms take nothing from one).
      series.generationTokens.record(tokens);
      series.iterationTokensTotal.record(tokens);
      if (record.logger !== undefined) this.logStep(record.logger, schedulerStats, undefined, tokens);
    } catch (error) {
      this.dropped('record', error);
    }
  }

  private recordInto(
    record: EngineRecord | undefined,
    engineIdx: number,
    schedulerStats: SchedulerStats | null | undefined,
    iterationStats: IterationStats | null | undefined,
  ): void {
    if (record === undefined) return;
    try {
      const series = record.series;
      if (schedulerStats) this.recordSchedulerStep(engineIdx, series, schedulerStats);
      if (iterationStats) {
        this.recordIteration(series, iterationStats);
        const genAi = this.genAi;
        const engine = genAi ? this.options.stageReplicaMap.lookup(engineIdx) : undefined;
        if (engine) genAi?.recordIteration(engine, iterationStats);
      }
      if (record.logger !== undefined) this.logStep(record.logger, schedulerStats, iterationStats, 0);
    } catch (error) {
      this.dropped('record', error);
    }
  }

  /** Hands one poll to the engine's periodic log line (a poll of `decodeTokens` decode steps when `iterationStats` is absent). */
  private logStep(
    logger: LoggingStatLogger,
    schedulerStats: SchedulerStats | null | undefined,
    iterationStats: IterationStats | null | undefined,
    decodeTokens: number,
  ): void {
    const stepStats = schedulerStats && !schedulerStats.sleepStateOnly ? schedulerStats : undefined;
    logger.record(stepStats, iterationStats ?? (decodeTokens !== 0 ? this.decodeOnly(decodeTokens) : undefined));
  }

  /**
   * One rejected frontend admission attempt (vLLM's `check_admission` refusing a request at
   * `--max-num-queued-reqs` / `--max-num-queued-tokens`): `vllm:admission_rejections_total{reason}`.
   */
  recordAdmissionRejection(reason: string): void {
    try {
      this.admissionRejections ??= new AdmissionRejections(this.store, this.options.modelName);
      this.admissionRejections.record(reason);
    } catch (error) {
      this.dropped('recordAdmissionRejection', error);
    }
  }

  private recordOffloadConnectors(engineIdx: number, series: EngineSeries, stats: SchedulerStats): void {
    const engine = this.options.stageReplicaMap.lookup(engineIdx);
    if (engine && stats.kvOffloadStats) recordKvOffload(this.store, this.options.modelName, engine, series, stats.kvOffloadStats);
    if (engine && stats.simpleKvOffloadStats) recordSimpleKvOffload(this.store, this.options.modelName, engine, stats.simpleKvOffloadStats);
  }

  /** vLLM's `record_sleep_state(sleep, level)` for one engine (every engine when omitted). */
  recordSleepState(sleeping: boolean, level: number, engineIdx?: number): void {
    try {
      const targets = engineIdx === undefined ? [...this.engines.keys()] : [engineIdx];
      for (const index of targets) {
        const entry = this.engine(index);
        if (entry !== undefined) this.recordSleepStateOn(entry.series, sleeping, level);
      }
    } catch (error) {
      this.dropped('recordSleepState', error);
    }
  }

  /**
   * `vllm:cache_config_info` = 1 for every engine, labelled with the config's fields. A config
   * `validateCacheConfig` refuses is dropped with a warning; the fields are read once, so a getter
   * cannot hand the check one value and the labels another.
   */
  logEngineInitialized(cacheConfig: CacheConfigInfo): void {
    let fields: Array<[string, unknown]> | undefined;
    try {
      fields = isConfigObject(cacheConfig) ? Object.entries(cacheConfig) : undefined;
    } catch {
      return this.unreadable.dropped('logEngineInitialized');
    }
    const error = fields === undefined ? notAConfigObject() : cacheConfigError(fields);
    if (error !== undefined) return this.invalidCacheConfig.warn(`OmniStatLogger.logEngineInitialized dropped a call: ${error.message}`);
    const labels = Object.fromEntries((fields as Array<[string, CacheConfigValue]>).map(([key, value]) => [key, pythonStr(key, value)]));
    this.cacheConfigLabels = labels;
    for (const [, { stage, replica }] of this.options.stageReplicaMap.entries()) {
      this.store.bind('upstream.cacheConfigInfo', [stage, replica], labels).record(1);
    }
  }

  /**
   * The log-line summary of an iteration of `tokens` decode tokens and nothing else: one object,
   * refilled for every such poll (a logger reads it during `record` only).
   */
  private decodeOnly(tokens: number): IterationStatsSummary {
    this.decodeSummary.numGenerationTokens = tokens;
    return this.decodeSummary;
  }

  private addLoggingLogger(entry: EngineRecord | undefined, { stage, replica }: StageReplica): void {
    if (this.periodic === undefined || entry === undefined) return;
    const sink = this.options.logSink ?? { info: (line: string) => console.info(line) };
    const logger = new LoggingStatLogger({ stage, replica, info: (line) => sink.info(line), debug: (line) => sink.debug?.(line) });
    this.periodic.add(logger);
    entry.logger = logger;
  }

  /**
   * Where every public method ends when its call fails (an argument that is not what it takes, a
   * getter that throws): the call is dropped and the method warned about once; nothing reaches the caller.
   */
  private dropped(method: string, error: unknown): void {
    this.failedCalls.warn(method, `OmniStatLogger.${method} failed; what the call carried is dropped`, error);
  }

  /** Stops the periodic log lines and stops following replica changes. */
  stop(): void {
    this.periodic?.stop();
    this.unsubscribe();
  }

  private engine(engineIdx: number): EngineRecord | undefined {
    const entry = this.engines.get(engineIdx);
    if (entry === undefined) {
      const text = indexText(engineIdx);
      this.unknownEngines.warn(text, `engine index ${text} is not in the stage/replica map; its stats are dropped`);
    }
    return entry;
  }

  /** One poll's scheduler stats: the gauges and cache counters every step sets, then whatever else the step carries. */
  private recordSchedulerStep(engineIdx: number, series: EngineSeries, stats: SchedulerStats): void {
    this.recordScheduler(series, stats);
    // Absent from most steps: kept out of line, so that V8 inlines the path every step takes.
    if (stats.kvOffloadStats || stats.simpleKvOffloadStats) this.recordOffloadConnectors(engineIdx, series, stats);
    if (
      stats.connectorPrefixCacheStats ||
      stats.mmCacheStats ||
      stats.specDecodingStats ||
      stats.kvConnectorStats ||
      stats.kvCacheEvictionEvents.length !== 0 ||
      stats.perfStats ||
      stats.sleepState ||
      this.options.features?.lora
    )
      this.recordSchedulerFeatures(series, stats);
  }

  private recordScheduler(series: EngineSeries, stats: SchedulerStats): void {
    // A sleep-state-only update is telemetry, not a scheduler step: its zero counts must not overwrite the gauges.
    if (stats.sleepStateOnly) {
      if (stats.sleepState) this.recordSleepStateOn(series, stats.sleepState.sleeping, stats.sleepState.level);
      return;
    }
    series.numRequestsRunning.record(stats.numRunningReqs);
    series.numRequestsWaiting.record(stats.numWaitingReqs + stats.numSkippedWaitingReqs);
    series.numRequestsWaitingByReason.capacity.record(stats.numWaitingReqs);
    series.numRequestsWaitingByReason.deferred.record(stats.numSkippedWaitingReqs);
    series.kvCacheUsagePerc.record(stats.kvCacheUsage);
    series.gpuCacheUsagePerc.record(stats.kvCacheUsage);
    // No lookups this step (most decode steps): the counters would add 0, so they are not called.
    const prefix = stats.prefixCacheStats;
    if (prefix.queries !== 0 || prefix.hits !== 0) {
      series.prefixCacheQueries.record(prefix.queries);
      series.prefixCacheHits.record(prefix.hits);
      series.gpuPrefixCacheQueries.record(prefix.queries);
      series.gpuPrefixCacheHits.record(prefix.hits);
    }
  }

  /** The scheduler stats of optional features (connectors, caches, speculative decoding, LoRA, sleep…). */
  private recordSchedulerFeatures(series: EngineSeries, stats: SchedulerStats): void {
    if (stats.sleepStateOnly) return;
    if (stats.connectorPrefixCacheStats) {
      series.externalPrefixCacheQueries.record(stats.connectorPrefixCacheStats.queries);
      series.externalPrefixCacheHits.record(stats.connectorPrefixCacheStats.hits);
    }
    if (stats.mmCacheStats) {
      series.mmCacheQueries.record(stats.mmCacheStats.queries);
      series.mmCacheHits.record(stats.mmCacheStats.hits);
    }
    const spec = stats.specDecodingStats;
    if (spec) {
      series.specDecodeNumDrafts.record(spec.numDrafts);
      series.specDecodeNumDraftTokens.record(spec.numDraftTokens);
      series.specDecodeNumAcceptedTokens.record(spec.numAcceptedTokens);
      const perPosition = series.specDecodeNumAcceptedTokensPerPos;
      for (let position = 0; position < perPosition.length; position++) perPosition[position]?.record(spec.numAcceptedTokensPerPos[position] ?? 0);
    }
    const nixl = stats.kvConnectorStats;
    if (nixl) {
      for (let i = 0; i < nixl.transferDuration.length; i++) series.nixlXferTimeSeconds.record(nixl.transferDuration[i] as number);
      for (let i = 0; i < nixl.postDuration.length; i++) series.nixlPostTimeSeconds.record(nixl.postDuration[i] as number);
      for (let i = 0; i < nixl.bytesTransferred.length; i++) series.nixlBytesTransferred.record(nixl.bytesTransferred[i] as number);
      for (let i = 0; i < nixl.numDescriptors.length; i++) series.nixlNumDescriptors.record(nixl.numDescriptors[i] as number);
      for (let i = 0; i < nixl.numFailedTransfers.length; i++) series.nixlNumFailedTransfers.record(nixl.numFailedTransfers[i] as number);
      for (let i = 0; i < nixl.numFailedNotifications.length; i++) series.nixlNumFailedNotifications.record(nixl.numFailedNotifications[i] as number);
      for (let i = 0; i < nixl.numKvExpiredReqs.length; i++) series.nixlNumKvExpiredReqs.record(nixl.numKvExpiredReqs[i] as number);
    }
    const evictions = stats.kvCacheEvictionEvents;
    for (let i = 0; i < evictions.length; i++) {
      const event = evictions[i] as (typeof evictions)[number];
      series.kvBlockLifetimeSeconds.record(event.lifetimeSeconds);
      series.kvBlockIdleBeforeEvictSeconds.record(event.idleSeconds);
      for (const gap of event.reuseGapsSeconds) series.kvBlockReuseGapSeconds.record(gap);
    }
    const lora = this.options.features?.lora;
    if (lora) {
      // One series per distinct adapter set, valued with the current time, as vLLM does.
      const running = Object.keys(stats.runningLoraAdapters).join(',');
      const waiting = Object.keys(stats.waitingLoraAdapters).join(',');
      this.store.bind('upstream.loraRequestsInfo', [lora.maxLoras, waiting, running]).record(this.wallClock());
    }
    const perf = stats.perfStats;
    if (perf && (perf.numFlopsPerGpu !== 0 || perf.numReadBytesPerGpu !== 0 || perf.numWriteBytesPerGpu !== 0)) {
      series.estimatedFlopsPerGpu.record(perf.numFlopsPerGpu);
      series.estimatedReadBytesPerGpu.record(perf.numReadBytesPerGpu);
      series.estimatedWriteBytesPerGpu.record(perf.numWriteBytesPerGpu);
    }
    if (stats.sleepState) this.recordSleepStateOn(series, stats.sleepState.sleeping, stats.sleepState.level);
  }

  private recordSleepStateOn(series: EngineSeries, sleeping: boolean, level: number): void {
    series.engineSleepState.awake.record(sleeping ? 0 : 1);
    series.engineSleepState.weights_offloaded.record(sleeping && level === 1 ? 1 : 0);
    series.engineSleepState.discard_all.record(sleeping && level === 2 ? 1 : 0);
  }

  private recordIteration(series: EngineSeries, stats: IterationStats): void {
    // A counter adds nothing for 0, so a zero is not handed to it. Most steps are decode steps,
    // zero for all but the generated tokens; V8 then inlines the records these steps do make.
    // Anything else (negative, NaN) still reaches the counter, which refuses it with a warning.
    if (stats.numPreemptedReqs !== 0) series.numPreemptions.record(stats.numPreemptedReqs);
    if (stats.numPromptTokens !== 0) series.promptTokens.record(stats.numPromptTokens);
    const prompt = stats.promptTokenStats;
    if (prompt.computed !== 0) series.promptTokensBySource.local_compute.record(prompt.computed);
    if (prompt.localCacheHit !== 0) series.promptTokensBySource.local_cache_hit.record(prompt.localCacheHit);
    if (prompt.externalKvTransfer !== 0) series.promptTokensBySource.external_kv_transfer.record(prompt.externalKvTransfer);
    if (prompt.cachedTokens !== 0) series.promptTokensCached.record(prompt.cachedTokens);
    series.generationTokens.record(stats.numGenerationTokens);
    // As vLLM mainline since May 2026 (vllm#43346): prompt tokens actually computed (no cache hits, no KV transfers) plus generated ones.
    series.iterationTokensTotal.record(prompt.computed + stats.numGenerationTokens);
    if (stats.numCorruptedReqs !== 0) series.corruptedRequests.record(stats.numCorruptedReqs);
    for (let i = 0; i < stats.maxNumGenerationTokensIter.length; i++)
      series.requestMaxNumGenerationTokens.record(stats.maxNumGenerationTokensIter[i] as number);
    for (let i = 0; i < stats.nParamsIter.length; i++) series.requestParamsN.record(stats.nParamsIter[i] as number);
    for (let i = 0; i < stats.timeToFirstTokensIter.length; i++) series.timeToFirstTokenSeconds.record(stats.timeToFirstTokensIter[i] as number);
    const interTokenLatency = series.interTokenLatencySeconds;
    for (let i = 0; i < stats.interTokenLatenciesIter.length; i++) interTokenLatency.record(stats.interTokenLatenciesIter[i] as number);
    // The deprecated twin of the inter-token family is hidden unless asked for: no second loop then.
    const timePerOutputToken = series.timePerOutputTokenSeconds;
    if (timePerOutputToken !== NOOP_SERIES)
      for (let i = 0; i < stats.interTokenLatenciesIter.length; i++) timePerOutputToken.record(stats.interTokenLatenciesIter[i] as number);
    const finishedRequests = stats.finishedRequests;
    for (let i = 0; i < finishedRequests.length; i++) {
      const finished = finishedRequests[i] as (typeof finishedRequests)[number];
      if (isFinishReason(finished.finishReason)) series.requestSuccess[finished.finishReason].record(1);
      series.e2eRequestLatencySeconds.record(finished.e2eLatency);
      series.requestQueueTimeSeconds.record(finished.queuedTime);
      series.requestPrefillTimeSeconds.record(finished.prefillTime);
      series.requestInferenceTimeSeconds.record(finished.inferenceTime);
      series.requestDecodeTimeSeconds.record(finished.decodeTime);
      series.requestPromptTokens.record(finished.numPromptTokens);
      series.requestGenerationTokens.record(finished.numGenerationTokens);
      series.requestPrefillKvComputedTokens.record(finished.numPromptTokens - Math.max(finished.numCachedTokens, 0));
      series.requestNumPreemptions.record(finished.numPreemptions);
      series.requestTimePerOutputTokenSeconds.record(finished.meanTimePerOutputToken);
      if (finished.maxTokensParam) series.requestParamsMaxTokens.record(finished.maxTokensParam);
    }
  }
}

/** Labels `vllm:cache_config_info` has besides the config's fields. */
const CACHE_CONFIG_RESERVED = new Set(['stage', 'replica', 'le']);

/**
 * Throws naming the field when a config cannot become `vllm:cache_config_info` labels: every key
 * a label name of its own (`[a-zA-Z_][a-zA-Z0-9_]*`, not `__`-prefixed, not stage / replica / le),
 * every value a string, finite number, boolean or null. A bad key would make every scrape
 * unparseable, so it is refused at registration.
 */
export function validateCacheConfig(cacheConfig: CacheConfigInfo): void {
  const error = isConfigObject(cacheConfig) ? cacheConfigError(Object.entries(cacheConfig)) : notAConfigObject();
  if (error !== undefined) throw error;
}

type CacheConfigValue = CacheConfigInfo[string];

function isConfigObject(cacheConfig: unknown): cacheConfig is CacheConfigInfo {
  return typeof cacheConfig === 'object' && cacheConfig !== null && !Array.isArray(cacheConfig);
}

function notAConfigObject(): TypeError {
  return new TypeError('cacheConfig must be an object of field → value');
}

/** What is wrong with a config's fields (already read), or undefined. */
function cacheConfigError(fields: ReadonlyArray<[string, unknown]>): TypeError | RangeError | undefined {
  for (const [key, value] of fields) {
    if (!LABEL_NAME_PATTERN.test(key) || key.startsWith('__') || CACHE_CONFIG_RESERVED.has(key)) {
      return new RangeError(
        `cacheConfig key ${JSON.stringify(key)} is not usable as a label name (want [a-zA-Z_][a-zA-Z0-9_]*, not __-prefixed, not stage / replica / le)`,
      );
    }
    const valid = value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!valid) return new TypeError(`cacheConfig.${key} must be a string, finite number, boolean or null`);
  }
  return undefined;
}

/** An engine index as text for a warning, without converting what could throw (a Symbol, an object's `toString`). */
function indexText(engineIdx: unknown): string {
  return typeof engineIdx === 'number' || typeof engineIdx === 'string' ? String(engineIdx) : `of type ${typeof engineIdx}`;
}

/** Python's `str()` of a config value, as vLLM's `metrics_info()` builds its labels. */
/**
 * `CacheConfig` fields Python holds as floats (current mainline and the releases before it), so
 * `str()` prints `4.0` where JavaScript has the number 4.
 */
const PYTHON_FLOAT_FIELDS: ReadonlySet<string> = new Set([
  'gpu_memory_utilization',
  'swap_space',
  'cpu_offload_gb',
  'kv_offloading_size',
  'kv_cache_max_concurrency',
]);

/** Python's `str()` of a config field's value: `None`, `True` / `False`, `4.0` for a float field, `16` for an int. */
function pythonStr(field: string, value: string | number | boolean | null): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' && (PYTHON_FLOAT_FIELDS.has(field) || !Number.isInteger(value))) return pythonFloatRepr(value);
  return String(value);
}
