/** One stage's replicas' latest waiting counts and their sum. */
interface StageSnapshots {
  readonly byReplica: Map<number, number>;
  total: number;
}

/**
 * Each replica's latest waiting count per stage, and each stage's sum kept as the counts change:
 * a poll updates one replica, so the stage total costs one subtraction and one addition rather
 * than a pass over every replica of the stage (hundreds, in a large pool, on every poll). Counts
 * are whole numbers, so the running sum is exact.
 */
export class WaitingSnapshots {
  private readonly stages = new Map<number, StageSnapshots>();

  /** Sets one replica's count (a whole number ≥ 0) and returns its stage's new total. */
  set(stage: number, replica: number, count: number): number {
    let snapshots = this.stages.get(stage);
    if (snapshots === undefined) {
      snapshots = { byReplica: new Map(), total: 0 };
      this.stages.set(stage, snapshots);
    }
    snapshots.total += count - (snapshots.byReplica.get(replica) ?? 0);
    snapshots.byReplica.set(replica, count);
    return snapshots.total;
  }

  /** Forgets one replica's count and returns its stage's new total (0 for a stage never reported). */
  delete(stage: number, replica: number): number {
    const snapshots = this.stages.get(stage);
    if (snapshots === undefined) return 0;
    snapshots.total -= snapshots.byReplica.get(replica) ?? 0;
    snapshots.byReplica.delete(replica);
    return snapshots.total;
  }
}
