import { sampleKey, type CellFactory, type CounterCell, type GaugeCell, type HistogramCell, type Labels } from './cells';
import { bucketIndex } from '../../views/store/series';

class FloatCounter implements CounterCell {
  value = 0;
  inc(value: number): void {
    this.value += value;
  }
}

class FloatGauge implements GaugeCell {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
}

class FloatHistogram implements HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  constructor(readonly bounds: Float64Array) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    this.counts[bucketIndex(this.bounds, value)]++;
    this.sum += value;
  }
}

/** The floor: a number per counter and gauge, a Float64Array of bucket counts per histogram. */
export function floatCells(): CellFactory {
  const all: Array<() => Array<[string, number]>> = [];
  return {
    counter(name, labels) {
      const cell = new FloatCounter();
      all.push(() => [[sampleKey(name, labels), cell.value]]);
      return cell;
    },
    gauge(name, labels) {
      const cell = new FloatGauge();
      all.push(() => [[sampleKey(name, labels), cell.value]]);
      return cell;
    },
    histogram(name, labels, bounds) {
      const cell = new FloatHistogram(Float64Array.from(bounds));
      all.push(() => histogramSamples(name, labels, cell));
      return cell;
    },
    samples: () => Promise.resolve(new Map(all.flatMap((read) => read()))),
  };
}

function histogramSamples(name: string, labels: Labels, cell: FloatHistogram): Array<[string, number]> {
  const samples: Array<[string, number]> = [];
  let cumulative = 0;
  cell.counts.forEach((count, i) => {
    cumulative += count;
    samples.push([sampleKey(`${name}_bucket`, { ...labels, le: String(cell.bounds[i] ?? Infinity) }), cumulative]);
  });
  samples.push([sampleKey(`${name}_count`, labels), cumulative], [sampleKey(`${name}_sum`, labels), cell.sum]);
  return samples;
}
