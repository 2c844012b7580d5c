import { DENSE_KEYS } from './common/small-int-map';
import { shown } from './common/option-checks';

/** A stage and replica as label values (`"0"`, `"1"`): what vLLM's `engine` label becomes. */
export interface StageReplica {
  readonly stage: string;
  readonly replica: string;
}

/** One replica as a single map key, e.g. `1/0`: the same key wherever replicas are sets or map keys. */
export function replicaKey(stage: string | number, replica: string | number): string {
  return `${stage}/${replica}`;
}

/** One replica joining or leaving the pipeline. */
export interface ReplicaChange {
  readonly kind: 'added' | 'removed';
  readonly engineIndex: number;
  readonly stage: number;
  readonly replica: number;
}

export type ReplicaChangeListener = (change: ReplicaChange) => void;

/**
 * The map from vLLM's flat engine index to (stage, replica). At start: stages in order, replicas
 * 0..n-1 within each, so pools [1, 2, 1] give 0:(0,0) 1:(1,0) 2:(1,1) 3:(2,0). Replicas added while
 * serving take the next unused engine index; a removed replica's index is never handed out again,
 * so an index always means one replica's lifetime (as a restarted vLLM engine is a new engine).
 */
export class StageReplicaMap {
  private readonly byEngine = new Map<number, StageReplica>();
  /** Per stage: replica id → engine index. */
  private readonly engineByStage: Array<Map<number, number>> = [];
  /**
   * The same for replica ids below `DENSE_KEYS`, in arrays indexed by replica id: every
   * poll looks its replica up, and an array read costs a fraction of a map lookup.
   */
  private readonly denseEngineByStage: Array<Array<number | undefined>> = [];
  private nextEngine = 0;
  private changes = 0;
  private readonly listeners = new Set<ReplicaChangeListener>();

  constructor(replicasPerStage: readonly number[]) {
    // No stages is a pipeline recorded at pipeline level only (no vLLM engine stages).
    if (!Array.isArray(replicasPerStage)) throw new TypeError('stagePools must list the replica count of each stage, e.g. [1, 2, 1]');
    replicasPerStage.forEach((count, stage) => {
      if (!Number.isInteger(count) || count < 1) {
        throw new RangeError(`stagePools[${stage}] must be a positive integer replica count; got ${shown(count)}`);
      }
    });
    replicasPerStage.forEach((count, stage) => {
      this.engineByStage.push(new Map());
      this.denseEngineByStage.push([]);
      for (let replica = 0; replica < count; replica++) this.addReplica(stage, replica);
    });
    this.changes = 0;
  }

  /** Replicas per stage now, e.g. [1, 2, 1]; a stage scaled to zero counts 0. */
  get replicasPerStage(): readonly number[] {
    return this.engineByStage.map((replicas) => replicas.size);
  }

  get engineCount(): number {
    return this.byEngine.size;
  }

  /** Bumped by every add and remove: lets caches keyed by engine index know they are stale. */
  get version(): number {
    return this.changes;
  }

  /** (stage, replica) of a flat engine index, or undefined when it is not (or no longer) mapped. */
  lookup(engineIndex: number): StageReplica | undefined {
    return this.byEngine.get(engineIndex);
  }

  /** Flat engine index of (stage, replica), or undefined when there is no such replica. */
  engineIndex(stage: number, replica: number): number | undefined {
    // Ids index arrays: what is no number names nothing (`'constructor'` would find the array's own,
    // and a comparison could call a hostile `valueOf`); a fractional or negative id finds nothing.
    if (typeof stage !== 'number') return undefined;
    if (typeof replica === 'number' && replica < DENSE_KEYS) return this.denseEngineByStage[stage]?.[replica];
    return this.engineByStage[stage]?.get(replica);
  }

  /** Every (engine index, stage, replica), in engine index order. */
  entries(): Array<[number, StageReplica]> {
    return [...this.byEngine.entries()];
  }

  /** Replica ids of one stage, ascending. */
  replicasOf(stage: number): number[] {
    return [...(this.engineByStage[stage]?.keys() ?? [])].sort((a, b) => a - b);
  }

  /**
   * Adds a replica to an existing stage: `replica` (a free id) or, by default, one above the
   * stage's highest. Returns its new engine index.
   */
  addReplica(stage: number, replica?: number): { readonly engineIndex: number; readonly replica: number } {
    const replicas = this.engineByStage[stage];
    if (!Number.isInteger(stage) || replicas === undefined) {
      throw new RangeError(`stage ${String(stage)} is not one of the ${this.engineByStage.length} stages`);
    }
    const id = replica ?? (replicas.size === 0 ? 0 : Math.max(...replicas.keys()) + 1);
    if (!Number.isInteger(id) || id < 0) throw new RangeError(`replica must be a non-negative integer; got ${shown(replica)}`);
    if (replicas.has(id)) throw new RangeError(`stage ${stage} already has replica ${id}`);
    const engineIndex = this.nextEngine++;
    replicas.set(id, engineIndex);
    if (id < DENSE_KEYS) (this.denseEngineByStage[stage] as Array<number | undefined>)[id] = engineIndex;
    this.byEngine.set(engineIndex, Object.freeze({ stage: String(stage), replica: String(id) }));
    this.changes++;
    this.notify({ kind: 'added', engineIndex, stage, replica: id });
    return { engineIndex, replica: id };
  }

  /** Removes a replica; returns the engine index it had, or undefined when there was none. */
  removeReplica(stage: number, replica: number): number | undefined {
    const engineIndex = this.engineIndex(stage, replica);
    if (engineIndex === undefined) return undefined;
    this.engineByStage[stage]?.delete(replica);
    if (replica < DENSE_KEYS) (this.denseEngineByStage[stage] as Array<number | undefined>)[replica] = undefined;
    this.byEngine.delete(engineIndex);
    this.changes++;
    this.notify({ kind: 'removed', engineIndex, stage, replica });
    return engineIndex;
  }

  /**
   * Called after every add and remove, in subscription order (the store, which drops a removed
   * replica's series, subscribes first). Returns the unsubscribe function.
   */
  onChange(listener: ReplicaChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(change: ReplicaChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
