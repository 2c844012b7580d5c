import { takeExemplar, type ExemplarSlots } from './exemplar-slots';
import { NativeHistogramSeries } from './native-histogram-series';
import { CounterSeries, HistogramSeries } from './series';

/**
 * Series of families that keep exemplars. They are separate classes so that the series of every
 * other family, and every series when exemplars are off, record exactly as before: the exemplar
 * work (a context lookup, a slot write) is paid only here.
 */

// Made only for a family that keeps exemplars, whose owner has a scope (`FamilySeries.exemplarScope`).

/** A counter that keeps its most recent increment's exemplar. */
export class ExemplarCounterSeries extends CounterSeries {
  /** Made at the first increment within a trace. */
  exemplars: ExemplarSlots | undefined = undefined;

  override record(increment: number): void {
    const before = this.value;
    super.record(increment);
    if (this.value !== before) takeExemplar(this, 0, increment);
  }
}

/** A histogram that keeps each bucket's most recent observation's exemplar. */
export class ExemplarHistogramSeries extends HistogramSeries {
  /** Made at the first observation within a trace. */
  exemplars: ExemplarSlots | undefined = undefined;

  override record(value: number): void {
    const bucket = this.observe(value);
    if (bucket >= 0) takeExemplar(this, bucket, value);
  }
}

/** The exemplars a series keeps, if its family keeps them. */
export function exemplarsOf(series: object): ExemplarSlots | undefined {
  return series instanceof ExemplarHistogramSeries || series instanceof ExemplarCounterSeries || series instanceof NativeHistogramSeries
    ? series.exemplars
    : undefined;
}
