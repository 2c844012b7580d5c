import { constants, PerformanceObserver, type NodeGCPerformanceDetail, type PerformanceObserverEntryList } from 'node:perf_hooks';
import { WarnOnce } from '../../views/common/diag-warnings';
import type { GcKind } from '../../views/catalog/process-families';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';

/** V8's collection kinds as `perf_hooks` numbers them, to the `kind` label prom-client gives them. */
const KIND_NAMES: ReadonlyMap<number, GcKind> = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/**
 * `nodejs_gc_duration_seconds`: every garbage collection's duration, by kind. The one runtime
 * value that cannot be read at collection time, since V8 keeps no running total of GC time: a
 * `PerformanceObserver` is told of each collection (in batches, after the fact), which costs a
 * callback per batch of collections and nothing per request. Started and stopped explicitly.
 */
export class GcDurations {
  private observer: PerformanceObserver | undefined;
  private readonly byKind = new Map<number, BoundSeries>();
  private readonly warnings = new WarnOnce();

  constructor(private readonly store: SeriesStore) {}

  start(): void {
    if (this.observer !== undefined || !this.store.has('process.nodejsGcDuration')) return;
    this.observer = new PerformanceObserver((list) => this.observe(list));
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = undefined;
  }

  private observe(list: PerformanceObserverEntryList): void {
    try {
      // Every entry: a batch can hold several collections.
      for (const entry of list.getEntries()) {
        const kind = (entry as { readonly detail?: NodeGCPerformanceDetail }).detail?.kind;
        if (kind !== undefined) this.seriesOf(kind)?.record(entry.duration / 1000);
      }
    } catch (error) {
      this.warnings.warn('gc', 'process metrics: a garbage collection entry could not be recorded', error);
    }
  }

  /** Undefined for a kind prom-client has no name for: the label keeps its four values. */
  private seriesOf(kind: number): BoundSeries | undefined {
    let series = this.byKind.get(kind);
    if (series === undefined) {
      const name = KIND_NAMES.get(kind);
      if (name === undefined) return undefined;
      series = this.store.bind('process.nodejsGcDuration', [name]);
      this.byKind.set(kind, series);
    }
    return series;
  }
}
