import { currentExemplarTrace } from './exemplar-trace';

/** Where exemplar timestamps come from: the wall clock, in milliseconds since the epoch (tests replace it). */
export const exemplarClock: { nowMillis: () => number } = { nowMillis: Date.now };

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
 * prometheus_client and the OpenMetrics examples keep the latest. Memory is fixed at creation:
 * four cells per slot (about 32 bytes, plus the two id strings once a trace is seen).
 */
export class ExemplarSlots {
  private readonly values: Float64Array;
  private readonly times: Float64Array;
  private readonly traceIds: Array<string | undefined>;
  private readonly spanIds: Array<string | undefined>;

  constructor(
    /** Histogram bucket upper bounds (`+Inf` implied); empty for a counter's single slot. */
    private readonly bounds: Float64Array,
  ) {
    const slots = bounds.length + 1;
    this.values = new Float64Array(slots);
    this.times = new Float64Array(slots);
    this.traceIds = new Array<string | undefined>(slots).fill(undefined);
    this.spanIds = new Array<string | undefined>(slots).fill(undefined);
  }

  get size(): number {
    return this.values.length;
  }

  /** Keeps `value` in its bucket's slot when the record runs within a trace (a counter: its increment). */
  take(value: number): void {
    const spanContext = currentExemplarTrace();
    if (spanContext === undefined) return;
    const bounds = this.bounds;
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (value <= (bounds[middle] as number)) high = middle;
      else low = middle + 1;
    }
    this.values[low] = value;
    this.times[low] = exemplarClock.nowMillis() / 1000;
    this.traceIds[low] = spanContext.traceId;
    this.spanIds[low] = spanContext.spanId;
  }

  /** Slot `i`'s exemplar, or undefined when none was kept. */
  at(i: number): Exemplar | undefined {
    const traceId = this.traceIds[i];
    if (traceId === undefined) return undefined;
    return { value: this.values[i] as number, timestampSeconds: this.times[i] as number, traceId, spanId: this.spanIds[i] as string };
  }

  /** Every slot's exemplar in bucket order (undefined where none). */
  all(): Array<Exemplar | undefined> {
    return Array.from({ length: this.size }, (_, i) => this.at(i));
  }
}
