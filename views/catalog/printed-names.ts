import type { FamilyType } from './family-definition';

/** What a family prints as: its Prometheus type, or an OpenMetrics info family (`target_info`). */
export type PrintedKind = FamilyType | 'info';

/** A family as the exposition prints it: its exposed name (counters end in `_total`) and kind. */
export interface PrintedFamily {
  readonly name: string;
  readonly kind: PrintedKind;
}

/** The `target_info` family a reader prints from the resource when asked. */
export const TARGET_INFO_FAMILY: PrintedFamily = { name: 'target_info', kind: 'info' };

/**
 * Every name a family can print in either text format, whatever the options: its sample names
 * (`_total`, `_created`, `_bucket`, `_count`, `_sum`, `_info`) and the names of its HELP/TYPE
 * lines (0.0.4 prints a counter's under `_total` and its `_created` as a family of its own;
 * OpenMetrics prints metadata under the stem, without `_total` or `_info`). Two families that
 * share one of these names make an exposition some parser refuses.
 */
export function printedNames(family: PrintedFamily): readonly string[] {
  const { name, kind } = family;
  switch (kind) {
    case 'counter': {
      const stem = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
      return [stem, `${stem}_total`, `${stem}_created`];
    }
    case 'histogram':
      return [name, `${name}_bucket`, `${name}_count`, `${name}_sum`, `${name}_created`];
    case 'info': {
      const stem = name.endsWith('_info') ? name.slice(0, -'_info'.length) : name;
      return [stem, `${stem}_info`];
    }
    case 'gauge':
      return [name];
  }
}

/** Two families that print the same name, and that name. */
export interface PrintedNameClash<F extends PrintedFamily> {
  readonly first: F;
  readonly second: F;
  readonly printedName: string;
}

/**
 * The first pair of families, in order, that print a common name (an exact duplicate included);
 * undefined when every printed name belongs to one family.
 */
export function findPrintedNameClash<F extends PrintedFamily>(families: Iterable<F>): PrintedNameClash<F> | undefined {
  const owners = new Map<string, F>();
  for (const family of families) {
    for (const printedName of new Set(printedNames(family))) {
      const owner = owners.get(printedName);
      if (owner !== undefined) return { first: owner, second: family, printedName };
      owners.set(printedName, family);
    }
  }
  return undefined;
}
