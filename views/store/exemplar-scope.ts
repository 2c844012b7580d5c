import { performance } from 'node:perf_hooks';
import { context, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { tracingRegistered } from './exemplar-trace';
import { ownedExemplarTrace, type ExemplarTrace } from './exemplar-trace-ids';

/**
 * Where exemplar timestamps come from, in milliseconds since the epoch: the monotonic clock from
 * its origin, as the OpenTelemetry SDK stamps spans, so an exemplar and its span agree and the
 * readings of one series never go backwards when the system time is adjusted (tests replace both).
 */
export const exemplarClock: { originMillis: number; nowMillis: () => number } = {
  originMillis: performance.timeOrigin,
  nowMillis: () => exemplarClock.originMillis + performance.now(),
};

/**
 * When a store's exemplars are taken: `on` for every record made within a sampled trace; `when-traced`
 * only once a tracer provider is registered globally, wherever it was registered from (before the
 * store, or after it, as NodeSDK's `start()` registers its own).
 */
export type ExemplarMode = 'on' | 'when-traced';

/**
 * The trace one store's exemplars are taken from, handed to the store's exemplar series and to
 * whoever records into them for a request. Engine-side and serving-side records happen outside
 * the request's own asynchronous context (an engine poll serves many requests at once), so whoever
 * knows which request a record belongs to names its trace for the duration of the calls that
 * record it (`null`: the request has none); outside such a scope (`undefined`) the OpenTelemetry
 * context active where the record runs is read. Inside a scope the active context is not read at
 * all, and the records share one clock reading: both lookups cost more than the record itself.
 * One per store: the records of one handle never take another handle's request trace.
 */
export class ExemplarScope {
  private requestTrace: ExemplarTrace | null | undefined;
  /** The scope's clock reading, taken by its first exemplar (NaN until then). */
  private scopeMillis = NaN;
  /**
   * Whether records take exemplars: undefined until a `when-traced` scope's first record looks for a
   * tracer provider; false while none is registered, until the next collection lets the next record look again.
   */
  private taking: boolean | undefined;

  constructor(mode: ExemplarMode = 'on') {
    this.taking = mode === 'on' ? true : undefined;
  }

  /**
   * A collection of the store (a scrape, an export): a scope that found no tracer provider looks
   * again at its next record, so one registered since (NodeSDK's `start()`) turns exemplars on.
   * One look per collection at most: a record never pays for it otherwise.
   */
  collected(): void {
    if (this.taking === false) this.taking = undefined;
  }

  /**
   * Names the trace of the request whose values are recorded until `leave(previous)` (undefined:
   * the request has no trace); returns what it replaces.
   */
  enter(spanContext: SpanContext | undefined): ExemplarTrace | null | undefined {
    const previous = this.requestTrace;
    // The request's trace is made an `ExemplarTrace` once, when the request starts: here that is a type check.
    this.requestTrace = spanContext === undefined ? null : (ownedExemplarTrace(spanContext) ?? null);
    this.scopeMillis = NaN;
    return previous;
  }

  leave(previous: ExemplarTrace | null | undefined): void {
    this.requestTrace = previous;
    this.scopeMillis = NaN;
  }

  /** Runs `work` within the trace of the request it records for (see `enter`). */
  within(spanContext: SpanContext | undefined, work: () => void): void {
    const previous = this.enter(spanContext);
    try {
      work();
    } finally {
      this.leave(previous);
    }
  }

  /**
   * The trace of the record being made: the request's named one, else (outside a request's scope)
   * the active span's if it is sampled (an exemplar must point at a trace the backend keeps).
   */
  current(): ExemplarTrace | undefined {
    if (this.taking !== true && !(this.taking ??= tracingRegistered())) return undefined;
    if (this.requestTrace !== undefined) return this.requestTrace ?? undefined;
    const spanContext = trace.getSpanContext(context.active());
    if (spanContext === undefined || (spanContext.traceFlags & TraceFlags.SAMPLED) !== TraceFlags.SAMPLED) return undefined;
    return ownedExemplarTrace(spanContext);
  }

  /**
   * The monotonic clock reading (`performance.now()` in seconds) the caller took for the records it
   * is about to make in this scope: their exemplars take it rather than read the clock again, a
   * reading that costs more than the records. Outside a scope it does nothing.
   */
  shareClockReading(monotonicSeconds: number): void {
    if (this.requestTrace !== undefined && this.scopeMillis !== this.scopeMillis) this.scopeMillis = exemplarClock.originMillis + monotonicSeconds * 1000;
  }

  /** When the record being made happens, in seconds since the epoch: one reading per request scope. */
  seconds(): number {
    if (this.requestTrace === undefined) return exemplarClock.nowMillis() / 1000;
    if (this.scopeMillis !== this.scopeMillis) this.scopeMillis = exemplarClock.nowMillis();
    return this.scopeMillis / 1000;
  }
}
