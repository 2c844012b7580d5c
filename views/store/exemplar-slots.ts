import { isPrintableTrace, type ExemplarTrace } from './exemplar-trace-ids';
import type { ExemplarScope } from './exemplar-scope';

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
    /** The trace and time of the record being made, as the store's recorders name them. */
    private readonly scope: ExemplarScope,
  ) {}

  get size(): number {
    return this.bounds.length + 1;
  }

  /**
   * Keeps `value` in `slot` when the record runs within a trace: a histogram's observation in the
   * bucket it just counted it in, a counter's increment in its single slot (0).
   */
  take(slot: number, value: number): void {
    const spanContext = this.scope.current();
    if (spanContext === undefined) return;
    if (this.cells === undefined || this.traces === undefined) {
      this.cells = new Float64Array(2 * this.size);
      this.traces = new Array<ExemplarTrace | undefined>(this.size).fill(undefined);
    }
    this.cells[2 * slot] = value;
    this.cells[2 * slot + 1] = this.scope.seconds();
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
