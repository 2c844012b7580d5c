import { WarnOnce } from '../../views/common/diag-warnings';
import { familyStem } from './exposition-text';
import type { ExpositionFamily, ExpositionType } from './model';

/**
 * The sample and metadata names a family occupies in both text formats: a counter `X_total`
 * occupies `X` (its OpenMetrics family), `X_total` and `X_created`; a histogram `H` occupies `H`,
 * `H_bucket`, `H_count`, `H_sum` and `H_created`; a gauge its name; an OpenMetrics info family
 * `X_info` also `X`. Two families that occupy one
 * name make an exposition that promtool and prometheus_client refuse (a second TYPE line, or
 * "Clashing name").
 */
export function occupiedNames(name: string, type: ExpositionType, openMetricsInfo = false): string[] {
  if (openMetricsInfo && name.endsWith('_info')) return [name, name.slice(0, -'_info'.length)];
  if (type === 'histogram') return [name, `${name}_bucket`, `${name}_count`, `${name}_sum`, `${name}_created`];
  if (type === 'counter') {
    const stem = familyStem(name, type);
    return [stem, `${stem}_total`, `${stem}_created`];
  }
  return [name];
}

const clashes = new WarnOnce();

/**
 * Keeps one exposition valid: families claim their names in order of precedence, and a family
 * whose names overlap one already claimed is left out of every format, with one warning naming
 * both. The package's own families claim first, so an application's instrument can never take a
 * catalog family's place.
 */
export class NameClaims {
  /** Every occupied name → the family that occupies it. */
  private readonly owners = new Map<string, string>();

  /** Takes the names of families that are printed whatever else is (the package's own, which the catalog keeps apart). */
  reserve(families: readonly ExpositionFamily[]): void {
    for (const { meta } of families) for (const sample of occupiedNames(meta.name, meta.type, meta.openMetricsInfo)) this.owners.set(sample, meta.name);
  }

  /** Claims the names of `family`: true when it may be printed. */
  claim(family: ExpositionFamily, whose: string): boolean {
    const { name, type } = family.meta;
    const occupied = occupiedNames(name, type, family.meta.openMetricsInfo);
    for (const sample of occupied) {
      const owner = this.owners.get(sample);
      if (owner === undefined) continue;
      clashes.warn(
        `${name} ${owner}`,
        `${whose} ${type} ${name} is left out of /metrics: its name ${sample} clashes with the family ${owner}, which is printed. Rename one of them.`,
      );
      return false;
    }
    for (const sample of occupied) this.owners.set(sample, name);
    return true;
  }

  /** The families that may be printed, claimed in order; `whose` names their owner in the warning. */
  keep(families: readonly ExpositionFamily[], whose: string): ExpositionFamily[] {
    return families.filter((family) => this.claim(family, whose));
  }
}
