import { CachingMetrics } from './caching-metrics';
import { monotonicSeconds, type SecondsClock } from './clock';
import { formatFixed, formatInteger } from './python-format';
import { createSchedulerStats, type SchedulerStats } from './types';

/** Receives one finished log line. */
export type LogLineSink = (line: string) => void;

/** What the logger reads from an `IterationStats`; hosts may hand in any object of this shape. */
export interface IterationStatsSummary {
  readonly promptTokenStats: { readonly computed: number };
  readonly numGenerationTokens: number;
  readonly numCorruptedReqs: number;
  readonly numPreemptedReqs: number;
}

export interface LoggingStatLoggerOptions {
  stage: number | string;
  replica: number | string;
  /** Sink for lines of an active engine. */
  info: LogLineSink;
  /** Sink for lines of an idle engine; without it those lines are dropped. */
  debug?: LogLineSink;
  /** Monotonic seconds; tests inject a fake one. */
  clock?: SecondsClock;
  /** Append `Corrupted: N reqs`, as vLLM does when `VLLM_COMPUTE_NANS_IN_LOGITS` is set. Default false. */
  showCorruptedRequests?: boolean;
}

const noop: LogLineSink = () => undefined;

/**
 * The periodic stats line of vLLM's `LoggingStatLogger`, for one (stage, replica) instead of one engine:
 * `Stage 0 replica 1: Avg prompt throughput: 10.8 tokens/s, Avg generation throughput: 34.3 tokens/s, Running:
 * 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 85.7%`.
 *
 * Feed it with `record()` after every engine step and call `log()` periodically (see `PeriodicLogger`).
 */
export class LoggingStatLogger {
  readonly stage: string;
  readonly replica: string;
  /** Hit rate windows over the most recent 1000 requests; never reset by `log()`. */
  readonly prefixCachingMetrics = new CachingMetrics();
  readonly connectorPrefixCachingMetrics = new CachingMetrics();
  readonly mmCachingMetrics = new CachingMetrics();

  private readonly linePrefix: string;
  private readonly info: LogLineSink;
  private readonly debug: LogLineSink;
  private readonly clock: SecondsClock;
  private readonly showCorruptedRequests: boolean;

  private lastLogTime: number;
  // Accumulated since the last log() call.
  private numPromptTokens = 0;
  private numGenerationTokens = 0;
  private numCorruptedReqs = 0;
  private numPreemptions = 0;

  private lastSchedulerStats: SchedulerStats = createSchedulerStats();
  private lastPromptThroughput = 0;
  private lastGenerationThroughput = 0;

  constructor(options: LoggingStatLoggerOptions) {
    if (typeof options.info !== 'function') throw new TypeError('LoggingStatLogger needs an info sink function');
    this.stage = String(options.stage);
    this.replica = String(options.replica);
    this.linePrefix = `Stage ${this.stage} replica ${this.replica}: `;
    this.info = options.info;
    this.debug = options.debug ?? noop;
    this.clock = options.clock ?? monotonicSeconds;
    this.showCorruptedRequests = options.showCorruptedRequests ?? false;
    this.lastLogTime = this.clock();
  }

  record(schedulerStats: SchedulerStats | undefined, iterationStats: IterationStatsSummary | undefined): void {
    if (iterationStats) {
      // Newest vLLM counts only computed prompt tokens: cached and transferred ones cost no prefill work.
      this.numPromptTokens += iterationStats.promptTokenStats.computed;
      this.numGenerationTokens += iterationStats.numGenerationTokens;
      this.numCorruptedReqs += iterationStats.numCorruptedReqs;
      this.numPreemptions += iterationStats.numPreemptedReqs;
    }
    if (schedulerStats) {
      this.prefixCachingMetrics.observe(schedulerStats.prefixCacheStats);
      if (schedulerStats.connectorPrefixCacheStats) {
        this.connectorPrefixCachingMetrics.observe(schedulerStats.connectorPrefixCacheStats);
      }
      if (schedulerStats.mmCacheStats) this.mmCachingMetrics.observe(schedulerStats.mmCacheStats);
      this.lastSchedulerStats = schedulerStats;
    }
  }

  /** Emits the line for the interval since the previous call and starts a new interval. */
  log(): void {
    const now = this.clock();
    const promptThroughput = this.throughput(this.numPromptTokens, now);
    const generationThroughput = this.throughput(this.numGenerationTokens, now);
    // Read before the reset: upstream resets first and then tests `num_preemptions > 0`, so its Preemptions and
    // Corrupted parts always read 0; the evident intent is this interval's counts.
    const preemptions = this.numPreemptions;
    const corruptedReqs = this.numCorruptedReqs;
    this.resetInterval(now);

    // Avoid log noise on an idle system: only when this and the previous interval both saw no tokens.
    const idle = [promptThroughput, generationThroughput, this.lastPromptThroughput, this.lastGenerationThroughput].every((throughput) => throughput === 0);
    this.lastPromptThroughput = promptThroughput;
    this.lastGenerationThroughput = generationThroughput;

    const scheduler = this.lastSchedulerStats;
    const parts = [
      `Avg prompt throughput: ${formatFixed(promptThroughput, 1)} tokens/s`,
      `Avg generation throughput: ${formatFixed(generationThroughput, 1)} tokens/s`,
      `Running: ${formatInteger(scheduler.numRunningReqs)} reqs`,
      `Waiting: ${formatInteger(scheduler.numWaitingReqs + scheduler.numSkippedWaitingReqs)} reqs`,
    ];
    if (scheduler.numSkippedWaitingReqs > 0) parts.push(`Deferred: ${formatInteger(scheduler.numSkippedWaitingReqs)} reqs`);
    if (preemptions > 0) parts.push(`Preemptions: ${formatInteger(preemptions)}`);
    parts.push(
      `GPU KV cache usage: ${formatFixed(scheduler.kvCacheUsage * 100, 1)}%`,
      `Prefix cache hit rate: ${formatFixed(this.prefixCachingMetrics.hitRate * 100, 1)}%`,
    );
    if (this.showCorruptedRequests) parts.push(`Corrupted: ${formatInteger(corruptedReqs)} reqs`);
    if (!this.connectorPrefixCachingMetrics.empty) {
      parts.push(`External prefix cache hit rate: ${formatFixed(this.connectorPrefixCachingMetrics.hitRate * 100, 1)}%`);
    }
    if (!this.mmCachingMetrics.empty) {
      parts.push(`MM cache hit rate: ${formatFixed(this.mmCachingMetrics.hitRate * 100, 1)}%`);
    }

    (idle ? this.debug : this.info)(this.linePrefix + parts.join(', '));
  }

  private throughput(tokens: number, now: number): number {
    const elapsedSeconds = now - this.lastLogTime;
    if (elapsedSeconds <= 0) return 0;
    return tokens / elapsedSeconds;
  }

  private resetInterval(now: number): void {
    this.lastLogTime = now;
    this.numPromptTokens = 0;
    this.numGenerationTokens = 0;
    this.numCorruptedReqs = 0;
    this.numPreemptions = 0;
  }
}
