import { isPrintableTrace, type ExemplarTrace } from './exemplar-trace-ids';
import type { SeriesOwner } from './series';

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
 * prometheus_client and the OpenMetrics examples keep the latest. A series makes its slots at its
 * first traced record (`takeExemplar`), so a series that is never traced holds none: two numbers
 * and one reference per slot (24 bytes), the reference to the request's `ExemplarTrace` (its ids
 * copied once per request, shared by all its records).
 */
export class ExemplarSlots {
  /** Per slot: the value, then the time in seconds. */
  private readonly cells: Float64Array;
  private readonly traces: Array<ExemplarTrace | undefined>;

  constructor(
    /** One per histogram bucket, `+Inf` included; 1 for a counter. */
    readonly size: number,
  ) {
    this.cells = new Float64Array(2 * size);
    this.traces = new Array<ExemplarTrace | undefined>(size).fill(undefined);
  }

  /** Keeps `value`, recorded at `seconds` (since the epoch) within `exemplarTrace`, in `slot`. */
  keep(slot: number, value: number, seconds: number, exemplarTrace: ExemplarTrace): void {
    this.cells[2 * slot] = value;
    this.cells[2 * slot + 1] = seconds;
    this.traces[slot] = exemplarTrace;
  }

  /** Slot `i`'s exemplar, or undefined when none was kept; what every exposition prints from, so the ids are checked here. */
  at(i: number): Exemplar | undefined {
    const exemplarTrace = this.traces[i];
    if (exemplarTrace === undefined || !isPrintableTrace(exemplarTrace)) return undefined;
    return {
      value: this.cells[2 * i] as number,
      timestampSeconds: this.cells[2 * i + 1] as number,
      traceId: exemplarTrace.traceId,
      spanId: exemplarTrace.spanId,
    };
  }

  /** Every slot's exemplar in bucket order (undefined where none). */
  all(): Array<Exemplar | undefined> {
    return Array.from({ length: this.size }, (_, i) => this.at(i));
  }
}

/** A series that keeps exemplars: its slots, once made, and its family. */
interface ExemplarHolder {
  exemplars: ExemplarSlots | undefined;
  readonly owner: SeriesOwner;
}

/**
 * Keeps `value` in `slot` of a series' exemplars when its family keeps them and the record runs
 * within a trace (a histogram's observation in the bucket it just counted it in, a counter's
 * increment in its single slot, 0). The slots are made at the series' first traced record; the
 * series is written to only then, as a store into it on every record costs a write barrier.
 */
export function takeExemplar(series: ExemplarHolder, slot: number, value: number): void {
  const scope = series.owner.exemplarScope;
  const exemplarTrace = scope?.current();
  if (scope === undefined || exemplarTrace === undefined) return;
  const slots = (series.exemplars ??= new ExemplarSlots(series.owner.bounds.length + 1));
  slots.keep(slot, value, scope.seconds(), exemplarTrace);
}
