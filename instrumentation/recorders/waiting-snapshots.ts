/** One stage's replicas' latest waiting counts (by replica id) and their sum. */
interface StageSnapshots {
  readonly byReplica: Array<number | undefined>;
  total: number;
}

/**
 * Each replica's latest waiting count per stage, and each stage's sum kept as the counts change:
 * a poll updates one replica, so the stage total costs one subtraction and one addition rather
 * than a pass over every replica of the stage (hundreds, in a large pool, on every poll). Counts
 * are whole numbers, so the running sum is exact. Stages and replicas index plain arrays, not
 * maps: this runs on every poll, and an array read costs a fraction of a map lookup. Any number
 * still works as an index (an odd one, as a named property), so nothing is refused.
 */
export class WaitingSnapshots {
  private readonly stages: Array<StageSnapshots | undefined> = [];

  /** Sets one replica's count (a whole number ≥ 0) and returns its stage's new total. */
  set(stage: number, replica: number, count: number): number {
    let snapshots = this.stages[stage];
    if (snapshots === undefined) {
      snapshots = { byReplica: [], total: 0 };
      this.stages[stage] = snapshots;
    }
    const byReplica = snapshots.byReplica;
    snapshots.total += count - (byReplica[replica] ?? 0);
    byReplica[replica] = count;
    return snapshots.total;
  }

  /** Whether the replica's latest count is `count` already (most polls of a steady engine). */
  holds(stage: number, replica: number, count: number): boolean {
    return this.stages[stage]?.byReplica[replica] === count;
  }

  /** Forgets one replica's count and returns its stage's new total (0 for a stage never reported). */
  delete(stage: number, replica: number): number {
    const snapshots = this.stages[stage];
    if (snapshots === undefined) return 0;
    snapshots.total -= snapshots.byReplica[replica] ?? 0;
    snapshots.byReplica[replica] = undefined;
    return snapshots.total;
  }
}
