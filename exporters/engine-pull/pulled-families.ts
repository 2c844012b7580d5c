import { readLabelValue } from '../../views/store/label-text';
import { replicaKey } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import type { ExpositionFamily, ExpositionSeries } from '../exposition/model';
import { snapshotFamily } from '../exposition/snapshot-families';
import type { SnapshotMetric } from '../snapshot';

/**
 * One pull's families as exposition families, built once per pull and printed by every scrape
 * until the next: the families the store has too join the store's blocks, the others follow
 * them. The engines are relabelled and checked before (see `engineSnapshot`); this only builds
 * the model, engine by engine, so the work is spread over the pull's slices.
 */
export class PulledFamilies {
  private readonly byName = new Map<string, ExpositionFamily>();

  /** Appends one engine's families (or the scrape-up gauge), joined by name with the families already added. */
  add(metrics: readonly SnapshotMetric[]): void {
    for (const metric of metrics) {
      const family = snapshotFamily(metric);
      const existing = this.byName.get(family.meta.name);
      if (existing === undefined) this.byName.set(family.meta.name, family);
      else if (existing.meta.type === family.meta.type)
        this.byName.set(family.meta.name, { meta: existing.meta, series: [...existing.series, ...family.series] });
    }
  }

  get(name: string): ExpositionFamily | undefined {
    return this.byName.get(name);
  }

  get all(): Iterable<ExpositionFamily> {
    return this.byName.values();
  }
}

/**
 * The store's families with a pull's series joined in: in a family vLLM's engines print too, a
 * pulled replica's own series give way to the engine's (its figures win) and every engine's
 * series follow the store's; then the pulled families the store does not have, in pull order.
 * `own` are the store's families in store order (`storeFamilies`).
 */
export function joinPulled(
  store: SeriesStore,
  own: readonly ExpositionFamily[],
  pulled: PulledFamilies,
  pulledReplicas: ReadonlySet<string>,
): { own: ExpositionFamily[]; pulledOnly: ExpositionFamily[] } {
  const names = new Set<string>();
  const joined = own.map((family, i) => {
    names.add(family.meta.name);
    const replaced = store.families[i]?.family.engineLabel === true && pulledReplicas.size > 0;
    const engines = pulled.get(family.meta.name);
    const extra = engines !== undefined && engines.meta.type === family.meta.type ? engines.series : [];
    if (!replaced && extra.length === 0) return family;
    const kept = replaced ? family.series.filter((series) => !pulledReplicas.has(replicaOf(series))) : family.series;
    return { meta: family.meta, series: [...kept, ...extra] };
  });
  const pulledOnly = [...pulled.all].filter((family) => !names.has(family.meta.name));
  return { own: joined, pulledOnly };
}

function replicaOf(series: ExpositionSeries): string {
  return replicaKey(readLabelValue(series.plain, 'stage') ?? '', readLabelValue(series.plain, 'replica') ?? '');
}
