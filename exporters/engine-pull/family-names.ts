import { PIPELINE_PREFIXES } from '../../views/names';

/** The kinds a pulled family is printed as. */
export type PrintedKind = 'counter' | 'gauge' | 'histogram';

export interface OwnFamily {
  /** Exposed name (counters end in `_total`). */
  readonly name: string;
  readonly type: PrintedKind;
}

/**
 * Which names the families of one exposition occupy, so that a family pulled from an engine is
 * printed only when the result stays valid in both the 0.0.4 text format and OpenMetrics:
 * a counter `X_total` occupies `X` (its OpenMetrics family), `X_total` and `X_created`; a
 * histogram `H` occupies `H`, `H_bucket`, `H_count`, `H_sum` and `H_created`; a gauge its name.
 * Two families may share a name only when they are one family (same name, same kind): they are
 * printed as one block. Any other overlap (a gauge `X_created` beside a counter `X_total`, a gauge
 * `X` beside it, a gauge `H_count` beside a histogram `H`) would print two HELP lines or clash in
 * OpenMetrics, so the later family is refused. The package's own families are claimed first, and
 * the pipeline's prefixes and `target_info` are never an engine's.
 */
export class FamilyNames {
  private readonly kinds = new Map<string, PrintedKind>();
  /** Every occupied name → the family that occupies it. */
  private readonly owners = new Map<string, string>();

  constructor(own: readonly OwnFamily[]) {
    for (const name of ['target_info', 'target']) this.owners.set(name, name);
    // The package's own families never give way (a clash among them is the configuration's to report).
    for (const family of own) {
      if (!this.kinds.has(family.name)) this.kinds.set(family.name, family.type);
      for (const occupied of occupiedNames(family.name, family.type)) if (!this.owners.has(occupied)) this.owners.set(occupied, family.name);
    }
  }

  /** Undefined when `name` may be printed as `kind` (new, or the same family again); else why it may not. */
  claim(name: string, kind: PrintedKind): string | undefined {
    const prefix = PIPELINE_PREFIXES.find((p) => name.startsWith(p));
    if (prefix !== undefined) return `${prefix}* families are the pipeline's own and never taken from an engine`;
    const known = this.kinds.get(name);
    if (known === kind) return undefined;
    if (known !== undefined) return `it is a ${kind} here but ${name} is printed as a ${known}`;
    const occupied = occupiedNames(name, kind);
    for (const sample of occupied) {
      const owner = this.owners.get(sample);
      if (owner !== undefined) return `its name ${sample} clashes with the family ${owner}`;
    }
    this.kinds.set(name, kind);
    for (const sample of occupied) this.owners.set(sample, name);
    return undefined;
  }
}

function occupiedNames(name: string, kind: PrintedKind): string[] {
  if (kind === 'histogram') return [name, `${name}_bucket`, `${name}_count`, `${name}_sum`, `${name}_created`];
  if (kind === 'counter') {
    const stem = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
    return [stem, `${stem}_total`, `${stem}_created`];
  }
  return [name];
}
