import type { StageReplicaMap } from '../../views/stage-replica-map';
import type { HostMethod } from './types';

/** Distinct replicas whose polls are counted; past it polls still count per method, not per replica. */
const MAX_COUNTED_REPLICAS = 4096;

/**
 * How often the hooks saw each host method called, and each replica polled: one increment per
 * host call (never per record), read by the self-check. Whether the hooks are attached at all
 * decides between "the host never called X" and "nothing reached the recorders".
 */
export class HostCallCounts {
  private readonly calls = new Map<HostMethod, number>();
  /** Polls per flat engine index (the stage/replica map's, so replaced replicas keep their slot). */
  private readonly polls = new Map<number, number>();
  private hooked = false;

  constructor(private readonly stageReplicaMap: StageReplicaMap) {}

  /**
   * Hooks started feeding this handle (enable). It stays true after they are disabled: the counts
   * they left still say which methods were called (the shutdown summary comes after disable).
   */
  attach(): void {
    this.hooked = true;
  }

  get attached(): boolean {
    return this.hooked;
  }

  called(method: HostMethod): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
  }

  /** A `pollEngine(stage, replica)` call (already counted by `called`). Unknown replicas are not kept. */
  polled(stage: unknown, replica: unknown): void {
    if (typeof stage !== 'number' || typeof replica !== 'number') return;
    const engineIndex = this.stageReplicaMap.engineIndex(stage, replica);
    if (engineIndex === undefined) return;
    const count = this.polls.get(engineIndex);
    if (count !== undefined) this.polls.set(engineIndex, count + 1);
    else if (this.polls.size < MAX_COUNTED_REPLICAS) this.polls.set(engineIndex, 1);
  }

  count(method: HostMethod): number {
    return this.calls.get(method) ?? 0;
  }

  pollsOf(engineIndex: number): number {
    return this.polls.get(engineIndex) ?? 0;
  }
}

/** The counts of each handle, for the hooks to find from the handle they are given (no public field). */
const countsByHandle = new WeakMap<object, HostCallCounts>();

export function setHostCallCounts(handle: object, counts: HostCallCounts): void {
  countsByHandle.set(handle, counts);
}

/** The counts of a handle from `registerOmniMetrics`; undefined for a hand-made handle (the hooks then count nothing). */
export function hostCallCountsOf(handle: object): HostCallCounts | undefined {
  return countsByHandle.get(handle);
}
