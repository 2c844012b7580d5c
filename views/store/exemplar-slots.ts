import { performance } from 'node:perf_hooks';
import { context, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { isPrintableTrace, ownedExemplarTrace, type ExemplarTrace } from './exemplar-trace-ids';

// The request scope lives in this module with the slots: a record reads its state directly, not through another module's exports.

/**
 * The trace an exemplar is taken from. Engine-side and serving-side records happen outside the
 * request's own asynchronous context (an engine poll serves many requests at once), so whoever
 * knows which request a record belongs to names its trace for the duration of the calls that
 * record it (`null`: the request has none); outside such a scope (`undefined`) the
 * OpenTelemetry context active where the record runs is read. Inside a scope the active context
 * is not read at all, and the records share one clock reading: both lookups cost more than the
 * record itself.
 */
let requestTrace: ExemplarTrace | null | undefined;
/** The scope's clock reading, taken by its first exemplar (NaN until then). */
let scopeMillis = NaN;

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
 * Names the trace of the request whose values are recorded until `leaveRequestTrace(previous)`
 * (undefined: the request has no trace); returns what it replaces.
 */
export function enterRequestTrace(spanContext: SpanContext | undefined): ExemplarTrace | null | undefined {
  const previous = requestTrace;
  // The request's trace is made an `ExemplarTrace` once, when the request starts: here that is a type check.
  requestTrace = spanContext === undefined ? null : (ownedExemplarTrace(spanContext) ?? null);
  scopeMillis = NaN;
  return previous;
}

export function leaveRequestTrace(previous: ExemplarTrace | null | undefined): void {
  requestTrace = previous;
  scopeMillis = NaN;
}

/**
 * The trace of the record being made: the request's named one, else (outside a request's scope)
 * the active span's if it is sampled (an exemplar must point at a trace the backend keeps).
 */
export function currentExemplarTrace(): ExemplarTrace | undefined {
  if (requestTrace !== undefined) return requestTrace ?? undefined;
  const spanContext = trace.getSpanContext(context.active());
  if (spanContext === undefined || (spanContext.traceFlags & TraceFlags.SAMPLED) !== TraceFlags.SAMPLED) return undefined;
  return ownedExemplarTrace(spanContext);
}

/**
 * The monotonic clock reading (`performance.now()` in seconds) the caller took for the records it
 * is about to make in this scope: their exemplars take it rather than read the clock again, a
 * reading that costs more than the records. Outside a scope (exemplars off) it does nothing.
 */
export function shareClockReading(monotonicSeconds: number): void {
  if (requestTrace !== undefined && scopeMillis !== scopeMillis) scopeMillis = exemplarClock.originMillis + monotonicSeconds * 1000;
}

/** When the record being made happens, in seconds since the epoch: one reading per request scope. */
export function exemplarSeconds(): number {
  if (requestTrace === undefined) return exemplarClock.nowMillis() / 1000;
  if (scopeMillis !== scopeMillis) scopeMillis = exemplarClock.nowMillis();
  return scopeMillis / 1000;
}

/** One kept exemplar: the observation, when it was made, and the trace it belongs to. */
export interface Exemplar {
  readonly value: number;
  /** Seconds since the epoch. */
  readonly timestampSeconds: number;
  readonly traceId: string;
  readonly spanId: string;
}

/**
 * The most recent exemplar of each slot: one per histogram bucket (`+Inf` last), or a single one
 * for a counter. A slot is overwritten by every later observation that has a trace, as
 * prometheus_client and the OpenMetrics examples keep the latest. Nothing is allocated until the
 * first exemplar: then two numbers and one reference per slot (24 bytes), the reference to the
 * request's `ExemplarTrace` (its ids copied once per request, shared by all its records).
 */
export class ExemplarSlots {
  /** Per slot: the value, then the time in seconds. */
  private cells: Float64Array | undefined;
  private traces: Array<ExemplarTrace | undefined> | undefined;

  constructor(
    /** Histogram bucket upper bounds (`+Inf` implied); empty for a counter's single slot. */
    private readonly bounds: Float64Array,
  ) {}

  get size(): number {
    return this.bounds.length + 1;
  }

  /**
   * Keeps `value` in `slot` when the record runs within a trace: a histogram's observation in the
   * bucket it just counted it in, a counter's increment in its single slot (0).
   */
  take(slot: number, value: number): void {
    const spanContext = currentExemplarTrace();
    if (spanContext === undefined) return;
    if (this.cells === undefined || this.traces === undefined) {
      this.cells = new Float64Array(2 * this.size);
      this.traces = new Array<ExemplarTrace | undefined>(this.size).fill(undefined);
    }
    this.cells[2 * slot] = value;
    this.cells[2 * slot + 1] = exemplarSeconds();
    this.traces[slot] = spanContext;
  }

  /** Slot `i`'s exemplar, or undefined when none was kept; what every exposition prints from, so the ids are checked here. */
  at(i: number): Exemplar | undefined {
    const exemplarTrace = this.traces?.[i];
    if (exemplarTrace === undefined || !isPrintableTrace(exemplarTrace)) return undefined;
    const cells = this.cells as Float64Array;
    return { value: cells[2 * i] as number, timestampSeconds: cells[2 * i + 1] as number, traceId: exemplarTrace.traceId, spanId: exemplarTrace.spanId };
  }

  /** Every slot's exemplar in bucket order (undefined where none). */
  all(): Array<Exemplar | undefined> {
    return Array.from({ length: this.size }, (_, i) => this.at(i));
  }
}
