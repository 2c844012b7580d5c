/** A stage and replica as label values (`"0"`, `"1"`): what vLLM's `engine` label becomes. */
export interface StageReplica {
  readonly stage: string;
  readonly replica: string;
}

/**
 * The startup map from vLLM's flat engine index to (stage, replica): stages in order, replicas
 * 0..n-1 within each. Pools [1, 2, 1] give 0:(0,0) 1:(1,0) 2:(1,1) 3:(2,0).
 * Replicas cannot be added later, as in the seed design.
 */
export class StageReplicaMap {
  readonly replicasPerStage: readonly number[];
  private readonly byEngine: readonly StageReplica[];
  private readonly engineByStage: readonly number[];

  constructor(replicasPerStage: readonly number[]) {
    if (!Array.isArray(replicasPerStage) || replicasPerStage.length === 0) {
      throw new RangeError('stagePools must list the replica count of at least one stage, e.g. [1, 2, 1]');
    }
    replicasPerStage.forEach((count, stage) => {
      if (!Number.isInteger(count) || count < 1) {
        throw new RangeError(`stagePools[${stage}] must be a positive integer replica count, got ${String(count)}`);
      }
    });
    this.replicasPerStage = Object.freeze([...replicasPerStage]);
    const byEngine: StageReplica[] = [];
    const engineByStage: number[] = [];
    replicasPerStage.forEach((count, stage) => {
      engineByStage.push(byEngine.length);
      for (let replica = 0; replica < count; replica++) {
        byEngine.push(Object.freeze({ stage: String(stage), replica: String(replica) }));
      }
    });
    this.byEngine = byEngine;
    this.engineByStage = engineByStage;
  }

  get engineCount(): number {
    return this.byEngine.length;
  }

  /** (stage, replica) of a flat engine index, or undefined when out of range. */
  lookup(engineIndex: number): StageReplica | undefined {
    return Number.isInteger(engineIndex) ? this.byEngine[engineIndex] : undefined;
  }

  /** Flat engine index of (stage, replica), or undefined when out of range. */
  engineIndex(stage: number, replica: number): number | undefined {
    const first = this.engineByStage[stage];
    const count = this.replicasPerStage[stage];
    if (first === undefined || count === undefined || !Number.isInteger(replica) || replica < 0 || replica >= count) {
      return undefined;
    }
    return first + replica;
  }

  /** Every (engine index, stage, replica) in flat order. */
  entries(): Array<[number, StageReplica]> {
    return this.byEngine.map((sr, index) => [index, sr]);
  }
}
