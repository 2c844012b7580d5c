import type { FamilyKey } from '../../views/catalog/catalog';
import type { LabelValue } from '../../views/store/family-series';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';

/**
 * A gauge whose value is read at collection time, not recorded. Its series is bound at the
 * first value read: a value that cannot be known on this platform is left out of the
 * exposition, never printed as 0.
 */
export class ReadGauge {
  private series: BoundSeries | undefined;

  constructor(
    private readonly store: SeriesStore,
    private readonly key: FamilyKey,
    private readonly labels: readonly LabelValue[] = [],
  ) {}

  set(value: number): void {
    (this.series ??= this.store.bind(this.key, this.labels)).record(value);
  }
}

/**
 * A counter whose running total is read (CPU seconds): each read adds what the total grew by
 * since the previous one, so the series holds the total read last. A total that went down is
 * ignored, as a counter never decreases.
 */
export class ReadCounter {
  private series: BoundSeries | undefined;
  private total = 0;

  constructor(
    private readonly store: SeriesStore,
    private readonly key: FamilyKey,
  ) {}

  setTotal(total: number): void {
    const series = (this.series ??= this.store.bind(this.key, []));
    if (!(total > this.total)) return;
    series.record(total - this.total);
    this.total = total;
  }
}
