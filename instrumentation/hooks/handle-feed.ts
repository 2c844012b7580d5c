import { recordersOf } from '../recorders/recorders';
import { PipelineObserver, DEFAULT_REQUEST_IDLE_TIMEOUT_MILLIS, type RequestLifetimeOptions } from '../pipeline/pipeline-observer';
import { hostCallCountsOf, type HostCallCounts } from '../self-check/host-calls';
import type { InstrumentedMetrics } from './instrumented-metrics';
import { TelemetryGuard } from './telemetry-guard';

/**
 * What the hooks feed for one registered handle: its one observer (and the idle sweep that ends
 * forgotten requests), the self-check's call counts, and the place telemetry failures are
 * reported. Instrumentations feeding one handle must each watch other sources (classes,
 * channels); the handle's `shutdown()` stops the feed.
 */
export class HandleFeed {
  readonly hostCalls: HostCallCounts | undefined;
  readonly guard = new TelemetryGuard();
  /** Who feeds the handle, each with what stops it (its `disable`). */
  private readonly owners = new Map<object, () => void>();
  /** Which owner feeds from each source: prototype → method name (the channels: one key) → owner. */
  private readonly claims = new WeakMap<object, Map<string, object>>();
  private current: PipelineObserver | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private lifetime: RequestLifetimeOptions = {};

  constructor(readonly metrics: InstrumentedMetrics) {
    this.hostCalls = hostCallCountsOf(metrics);
  }

  /** The observer the hooks feed, created on first use (after a `close`, a fresh one). */
  get observer(): PipelineObserver {
    this.current ??= new PipelineObserver(recordersOf(this.metrics), this.metrics.stageReplicaMap, {
      ...this.lifetime,
      exemplarScope: this.metrics.store.exemplarScope,
    });
    return this.current;
  }

  /** The observer now in use, if any: a stream started on another one is no longer followed. */
  get observing(): PipelineObserver | undefined {
    return this.current;
  }

  /**
   * `owner` (an instrumentation) starts feeding the handle. The first owner starts the idle sweep
   * with its lifetime options.
   */
  open(owner: object, lifetime: RequestLifetimeOptions, stop: () => void): void {
    if (this.owners.has(owner)) return;
    this.owners.set(owner, stop);
    if (this.owners.size > 1) return;
    this.lifetime = lifetime;
    const idleMillis = lifetime.requestIdleTimeoutMillis ?? DEFAULT_REQUEST_IDLE_TIMEOUT_MILLIS;
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(idleMillis / 4, 30_000)));
    this.sweeper.unref();
  }

  /**
   * Who else feeds the handle from this source (a host method of a prototype, or the channels),
   * if anyone: two instrumentations of one handle on one source would count each call twice.
   */
  claimedBy(source: object, name: string): object | undefined {
    return this.claims.get(source)?.get(name);
  }

  /** `owner` feeds the handle from this source; the self-check counts it as attached until it is released. */
  claim(owner: object, source: object, name: string): void {
    let names = this.claims.get(source);
    if (names === undefined) this.claims.set(source, (names = new Map()));
    if (!names.has(name)) this.hostCalls?.attach();
    names.set(name, owner);
  }

  release(owner: object, source: object, name: string): void {
    const names = this.claims.get(source);
    if (names?.get(name) !== owner) return;
    names.delete(name);
    this.hostCalls?.detach();
  }

  /**
   * `owner` stops feeding the handle. When no one feeds it any more, requests in flight are
   * forgotten (uncounted; gauges back to 0), so nothing is recorded until one opens it again.
   */
  close(owner: object): void {
    if (!this.owners.delete(owner) || this.owners.size > 0) return;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.current?.settle();
    this.current = undefined;
  }

  /**
   * The handle shuts down: every instrumentation feeding it is disabled (its methods restored
   * unless another handle listens), and no timer of the feed remains.
   */
  stop(): void {
    for (const [owner, stop] of [...this.owners]) {
      stop();
      this.close(owner);
    }
  }

  private sweep(): void {
    try {
      this.current?.sweep();
    } catch (error) {
      this.guard.report('idle request sweep', error);
    }
  }
}

const feeds = new WeakMap<object, HandleFeed>();

/** The feed of a handle (one per handle, created on first use). */
export function feedOf(metrics: InstrumentedMetrics): HandleFeed {
  let feed = feeds.get(metrics);
  if (feed === undefined) {
    feed = new HandleFeed(metrics);
    feeds.set(metrics, feed);
  }
  return feed;
}

/** Stops the feed of a handle, if hooks ever fed it (the handle's `shutdown()`). */
export function stopFeedOf(handle: object): void {
  feeds.get(handle)?.stop();
}
