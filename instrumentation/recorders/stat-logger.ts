import { packageDiag } from '../../views/common/package-diag';
import type { FeatureOptions } from '../../views/catalog/catalog';
import { LimitedWarning, WarnOnce } from '../../views/common/diag-warnings';
import { checkObject, optionKeys, shown } from '../../views/common/option-checks';
import type { StageReplica, StageReplicaMap } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import { SmallIntMap } from '../../views/common/small-int-map';
import { NOOP_SERIES } from '../../views/store/series';
import type { IterationStats } from '../stats/iteration-stats';
import { LoggingStatLogger } from '../stats/logging-stat-logger';
import { DEFAULT_LOG_STATS_INTERVAL_SECONDS, PeriodicLogger } from '../stats/periodic-logger';
import { isFinishReason, type FinishedRequestStats, type SchedulerStats } from '../stats/types';
import { pythonFloatRepr } from '../../views/common/go-float';
import { LABEL_NAME_PATTERN } from '../../views/catalog/names';
import { UnreadableInput } from './never-throw';
import { bindEngineSeries, type EngineSeries } from './engine-series';
import { AdmissionRejections } from './admission-rejections';
import { carriesFeature, recordFeatures, recordSleepState, type FeatureTarget } from './scheduler-features';

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

/** One engine's series (what its scheduler features record into) and, with periodic logging on, the logger of its log lines. */
interface EngineRecord extends FeatureTarget {
  logger: LoggingStatLogger | undefined;
}

/**
 * The upstream `vllm:*` families per (stage, replica): vLLM's `PrometheusStatLogger` with the
 * `engine` label reshaped, as vLLM-Omni's `OmniPrometheusStatLogger`. Every replica's series
 * are created at construction, as vLLM creates each engine's at start (an idle scrape shows them
 * at zero, each replica reported awake). Never throws into the caller.
 */
export class OmniStatLogger {
  /** Per engine index: its series and its log-line logger (read by every poll, hence no plain map). */
  private readonly engines = new SmallIntMap<EngineRecord>();
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

  /** @internal */
  constructor(
    private readonly store: SeriesStore,
    private readonly options: OmniStatLoggerOptions,
  ) {
    checkObject(options, 'OmniStatLogger options', STAT_LOGGER_OPTION_KEYS);
    this.wallClock = options.wallClock ?? (() => Date.now() / 1000);
    this.genAi = options.genAi;
    const interval = options.logIntervalSeconds ?? DEFAULT_LOG_STATS_INTERVAL_SECONDS;
    if (!(interval >= 0)) throw new RangeError(`logIntervalSeconds must be >= 0; got ${shown(interval)}`);
    const entries = options.stageReplicaMap.entries();
    const bound = bindEngineSeries(
      store,
      options.modelName,
      entries.map(([, engine]) => engine),
      options.features,
    );
    entries.forEach(([engineIdx, engine], i) => this.engines.set(engineIdx, this.engineRecord(engine, bound[i] as EngineSeries)));
    for (const { series } of this.engines.values()) recordSleepState(series, false, 0);
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
   * @internal
   */
  addEngine(engineIdx: number): void {
    try {
      const engine = this.options.stageReplicaMap.lookup(engineIdx);
      if (engine === undefined || this.engines.has(engineIdx)) return;
      const [series] = bindEngineSeries(this.store, this.options.modelName, [engine], this.options.features);
      if (series === undefined) return;
      const entry = this.engineRecord(engine, series);
      this.engines.set(engineIdx, entry);
      recordSleepState(series, false, 0);
      if (this.cacheConfigLabels) this.store.bind('upstream.cacheConfigInfo', [engine.stage, engine.replica], this.cacheConfigLabels).record(1);
      this.addLoggingLogger(entry, engine);
    } catch (error) {
      this.dropped('addEngine', error);
    }
  }

  /**
   * A replica left (called by the stage/replica map): its stats are no longer recorded or logged; the store drops its series.
   * @internal
   */
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
   * @internal
   */
  useGenAi(sink: IterationStatsSink | undefined): void {
    this.genAi = sink;
  }

  /** @internal */
  get stageReplicaMap(): StageReplicaMap {
    return this.options.stageReplicaMap;
  }

  /**
   * One poll of one replica, as vLLM's `record(scheduler_stats, iteration_stats, engine_idx)`:
   * scheduler stats (gauges, cache counters, feature families) and/or iteration stats (tokens,
   * latencies, finished requests), for flat engine index `engineIdx`. An index the stage/replica
   * map does not know has no series (vLLM raises): its stats are dropped with one warning.
   * @internal
   */
  record(schedulerStats: SchedulerStats | null | undefined, iterationStats: IterationStats | null | undefined, engineIdx: number): void {
    try {
      const record = this.engine(engineIdx);
      if (record === undefined) return;
      if (schedulerStats) this.recordSchedulerStep(record, schedulerStats);
      if (iterationStats) {
        this.recordIteration(record.series, iterationStats);
        this.genAi?.recordIteration(record.engine, iterationStats);
      }
      if (record.logger !== undefined) {
        const stepStats = schedulerStats && !schedulerStats.sleepStateOnly ? schedulerStats : undefined;
        record.logger.record(stepStats, iterationStats ?? undefined);
      }
    } catch (error) {
      this.dropped('record', error);
    }
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

  /** vLLM's `record_sleep_state(sleep, level)` for one engine (every engine when omitted). */
  recordSleepState(sleeping: boolean, level: number, engineIdx?: number): void {
    try {
      const targets = engineIdx === undefined ? [...this.engines.keys()] : [engineIdx];
      for (const index of targets) {
        const entry = this.engine(index);
        if (entry !== undefined) recordSleepState(entry.series, sleeping, level);
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

  /**
   * Stops the periodic log lines and stops following replica changes.
   * @internal
   */
  stop(): void {
    this.periodic?.stop();
    this.unsubscribe();
  }

  private engineRecord(engine: StageReplica, series: EngineSeries): EngineRecord {
    return { series, engine, store: this.store, modelName: this.options.modelName, logger: undefined };
  }

  private engine(engineIdx: number): EngineRecord | undefined {
    const entry = this.engines.get(engineIdx);
    if (entry === undefined) {
      const text = indexText(engineIdx);
      this.unknownEngines.warn(text, `engine index ${text} is not in the stage/replica map; its stats are dropped`);
    }
    return entry;
  }

  /**
   * One poll's scheduler stats: the gauges and cache counters every step sets, then whichever
   * optional features the stats carry. A sleep-state-only update is telemetry, not a scheduler
   * step: its zero counts must not overwrite the step's gauges, but what features it carries
   * (its sleep state, a connector's transfers) are recorded as from any step: nothing reported is lost.
   */
  private recordSchedulerStep(record: EngineRecord, stats: SchedulerStats): void {
    if (!stats.sleepStateOnly) this.recordStepGauges(record.series, stats);
    if (carriesFeature(stats)) recordFeatures(stats, record);
  }

  private recordStepGauges(series: EngineSeries, stats: SchedulerStats): void {
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
    const lora = this.options.features?.lora;
    if (lora) {
      // One series per distinct adapter set, valued with the current time, as vLLM does.
      const running = Object.keys(stats.runningLoraAdapters).join(',');
      const waiting = Object.keys(stats.waitingLoraAdapters).join(',');
      this.store.bind('upstream.loraRequestsInfo', [lora.maxLoras, waiting, running]).record(this.wallClock());
    }
  }

  private recordIteration(series: EngineSeries, stats: IterationStats): void {
    // A counter adds nothing for 0, so a zero is not handed to it: most steps are decode steps,
    // zero for all but the generated tokens. Anything else (negative, NaN) still reaches the
    // counter, which refuses it with a warning.
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
    for (let i = 0; i < finishedRequests.length; i++) recordFinishedRequest(series, finishedRequests[i] as FinishedRequestStats);
  }
}

/** One request that finished in the step: its outcome, latencies and token counts. */
function recordFinishedRequest(series: EngineSeries, finished: FinishedRequestStats): void {
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
