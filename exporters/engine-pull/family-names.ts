import { PIPELINE_PREFIXES } from '../../views/catalog/names';
import { occupiedNames } from '../exposition/name-claims';

/** The kinds a pulled family is printed as. */
export type PrintedKind = 'counter' | 'gauge' | 'histogram';

export interface OwnFamily {
  /** Exposed name (counters end in `_total`). */
  readonly name: string;
  readonly type: PrintedKind;
}

/**
 * Which names the families of one pull occupy (see `occupiedNames`), so that a family pulled from
 * an engine is kept only when the exposition stays valid. Unlike the exposition's own claims,
 * families of one name and kind are one family: every engine's `vllm:num_requests_running` joins
 * the others', and the store's family of that name. Any other overlap (a gauge `X_created` beside
 * a counter `X_total`, a gauge `H_count` beside a histogram `H`) refuses the later family. The
 * package's own families are claimed first, and the pipeline's prefixes and `target_info` are
 * never an engine's.
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
