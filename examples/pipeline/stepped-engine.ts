import { performance } from 'node:perf_hooks';
import { StatsThrottle, type SchedulerStats } from 'omni-otel-metrics';
import type { StageEngine, StageEngineOutput, StageEngineOutputs, StageInput } from './stage-engine';

/** Engine monotonic seconds, the clock of vLLM's engine-core event timestamps. */
export type SecondsClock = () => number;
const monotonicSeconds: SecondsClock = () => performance.now() / 1000;

export interface SteppedEngineOptions {
  readonly stageId: number;
  readonly replicaId: number;
  /** One per replica by default; a shared one must be keyed per replica, as this engine does. */
  readonly statsThrottle?: StatsThrottle;
  /** Engine monotonic seconds for output and event timestamps. */
  readonly clock?: SecondsClock;
}

/**
 * The step loop every simulated replica shares: steps run on the engine's own timer while it has
 * work, each step's outputs are buffered until polled, and scheduler stats ride on a step at most
 * once per `statsThrottle` interval (vLLM-Omni's `make_stats` gate). An idle replica sends one
 * stats-only step once the gate reopens, so the gauges settle.
 *
 * A subclass says what one step is: `planStep` picks the work (`TEntry` per request), `stepDurationMs`
 * how long it takes, `runStep` what it produces; `schedulerStats` and `forgetAllWork` cover the rest.
 */
export abstract class SteppedEngine<TEntry> implements StageEngine {
  readonly stageId: number;
  readonly replicaId: number;
  /** Names this replica, both as its key in a shared stats throttle and in error messages. */
  protected readonly throttleKey: string;
  protected readonly clock: SecondsClock;
  private readonly throttle: StatsThrottle;
  private readonly buffered: StageEngineOutputs[] = [];
  private completedSteps = 0;
  private started = false;
  private stepTimer: NodeJS.Timeout | undefined;
  private idleStatsTimer: NodeJS.Timeout | undefined;
  /** Stats changed since the last emission, so an idle replica still owes one snapshot. */
  private statsDirty = false;

  protected constructor(options: SteppedEngineOptions) {
    this.stageId = options.stageId;
    this.replicaId = options.replicaId;
    this.throttle = options.statsThrottle ?? new StatsThrottle();
    this.throttleKey = `${options.stageId}:${options.replicaId}`;
    this.clock = options.clock ?? monotonicSeconds;
  }

  get bufferedSteps(): number {
    return this.buffered.length;
  }

  start(): void {
    this.started = true;
    this.kick();
  }

  stop(): void {
    this.started = false;
    clearTimeout(this.stepTimer);
    clearTimeout(this.idleStatsTimer);
    this.stepTimer = undefined;
    this.idleStatsTimer = undefined;
    this.forgetAllWork();
    this.buffered.length = 0;
  }

  abstract submit(input: StageInput): void;

  abstract abort(requestId: string): void;

  poll(): StageEngineOutputs | undefined {
    return this.buffered.shift();
  }

  /**
   * Runs one whole step now, without the timer (deterministic tests). Returns false when there was
   * nothing to compute. Not to be mixed with `start()`.
   */
  runStepSync(): boolean {
    if (this.started) throw new Error('runStepSync() is for an engine that was not started');
    const entries = this.planStep();
    if (entries === undefined || entries.length === 0) return false;
    this.completeStep(entries);
    return true;
  }

  /** Steps completed so far (vLLM's `step_counter`), for the scheduler stats. */
  protected get stepCounter(): number {
    return this.completedSteps;
  }

  /**
   * The work of the next step, taken from the queues. Undefined when the replica has no work (it
   * goes idle); an empty list when it has work but none could run, which still takes a step's time.
   */
  protected abstract planStep(): readonly TEntry[] | undefined;

  /** How long a planned step takes; called only for timer-driven steps, so it may draw randomness. */
  protected abstract stepDurationMs(entries: readonly TEntry[]): number;

  /** Applies a finished step and returns its outputs; entries aborted meanwhile produce none. */
  protected abstract runStep(entries: readonly TEntry[]): StageEngineOutput[];

  /** A snapshot of the queues for this step's stats; resets whatever is reported per interval. */
  protected abstract schedulerStats(): SchedulerStats;

  /** Drops every request and whatever the replica holds for them (on `stop`). */
  protected abstract forgetAllWork(): void;

  /** The queues changed, so the next gate opening owes a stats snapshot. */
  protected markStatsDirty(): void {
    this.statsDirty = true;
  }

  /** After an abort the engine reports nothing more for the request, not even steps already buffered. */
  protected dropBufferedOutputs(requestId: string): void {
    for (let i = 0; i < this.buffered.length; i++) {
      const step = this.buffered[i];
      if (step.outputs.some((output) => output.requestId === requestId)) {
        this.buffered[i] = { ...step, outputs: step.outputs.filter((output) => output.requestId !== requestId) };
      }
    }
  }

  /** Starts a step if the loop is idle and there is work; the step completes after its duration. */
  protected kick(): void {
    if (!this.started || this.stepTimer !== undefined) return;
    const entries = this.planStep();
    if (entries === undefined) {
      this.armIdleStats();
      return;
    }
    clearTimeout(this.idleStatsTimer);
    this.idleStatsTimer = undefined;
    this.stepTimer = setTimeout(() => {
      this.stepTimer = undefined;
      if (!this.started) return;
      this.completeStep(entries);
      this.kick();
    }, this.stepDurationMs(entries));
    this.stepTimer.unref();
  }

  private completeStep(entries: readonly TEntry[]): void {
    this.completedSteps += 1;
    const timestamp = this.clock();
    const outputs = this.runStep(entries);
    const schedulerStats = this.takeStatsIfDue();
    const numWaitingRequests = this.waitingSnapshot();
    if (outputs.length > 0 || schedulerStats !== undefined) this.buffered.push({ timestamp, outputs, schedulerStats, numWaitingRequests });
  }

  /** A waiting count sent with every step, for engines without vLLM scheduler stats (diffusion). */
  protected waitingSnapshot(): number | undefined {
    return undefined;
  }

  /** The scheduler stats of this step, if this replica's gate lets them through. */
  private takeStatsIfDue(): SchedulerStats | undefined {
    if (!this.statsDirty || !this.throttle.shouldEmit(this.throttleKey)) return undefined;
    this.statsDirty = false;
    return this.schedulerStats();
  }

  /** With nothing to compute, one stats-only step once the gate reopens, so the gauges settle. */
  private armIdleStats(): void {
    if (!this.statsDirty || this.idleStatsTimer !== undefined) return;
    this.idleStatsTimer = setTimeout(() => {
      this.idleStatsTimer = undefined;
      // Any new work or step clears this timer first, so this only guards against a late firing.
      if (!this.started || this.stepTimer !== undefined) return;
      const schedulerStats = this.takeStatsIfDue();
      if (schedulerStats !== undefined) this.buffered.push({ timestamp: this.clock(), outputs: [], schedulerStats });
      else this.armIdleStats();
    }, this.throttle.intervalSeconds * 1000);
    this.idleStatsTimer.unref();
  }
}
