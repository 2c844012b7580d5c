import type { StagePoolLike } from '../../instrumentation/hooks/host-contract';
import type { StageEngine } from './stage-engine';

/**
 * The replicas of one stage, with sticky routing: a request is bound to the least-loaded replica
 * the first time it reaches the stage and stays there until `release`. Load is the number of
 * requests whose work on the stage is unfinished (bound and not yet `markDone`), so requests that
 * moved on to the next stage do not count against the replica that served them.
 */
export class StagePool implements StagePoolLike {
  readonly stageId: number;
  private readonly engines: readonly StageEngine[];
  private readonly bindings = new Map<string, number>();
  private readonly active: Set<string>[];
  /** Where the next tie-break scan starts, so equal loads rotate instead of piling onto replica 0. */
  private nextStart = 0;

  constructor(stageId: number, engines: readonly StageEngine[]) {
    if (engines.length === 0) throw new RangeError(`stage ${stageId} needs at least one replica`);
    this.stageId = stageId;
    this.engines = engines;
    this.active = engines.map(() => new Set<string>());
  }

  get numReplicas(): number {
    return this.engines.length;
  }

  getBoundReplicaId(requestId: string): number | undefined {
    return this.bindings.get(requestId);
  }

  /** The request's replica: its existing binding, or the least-loaded replica, now bound. */
  bind(requestId: string): number {
    const existing = this.bindings.get(requestId);
    if (existing !== undefined) return existing;
    let best = this.nextStart;
    for (let offset = 1; offset < this.engines.length; offset++) {
      const candidate = (this.nextStart + offset) % this.engines.length;
      if (this.active[candidate].size < this.active[best].size) best = candidate;
    }
    this.nextStart = (best + 1) % this.engines.length;
    this.bindings.set(requestId, best);
    this.active[best].add(requestId);
    return best;
  }

  /** The request's work on this stage is over; it keeps its binding until `release`. */
  markDone(requestId: string): void {
    const replicaId = this.bindings.get(requestId);
    if (replicaId !== undefined) this.active[replicaId].delete(requestId);
  }

  /** Drops the binding; later lookups return undefined. Unknown ids are ignored. */
  release(requestId: string): void {
    this.markDone(requestId);
    this.bindings.delete(requestId);
  }

  engine(replicaId: number): StageEngine {
    const engine = this.engines[replicaId];
    if (engine === undefined) throw new RangeError(`stage ${this.stageId} has no replica ${replicaId}`);
    return engine;
  }

  /** Requests currently routed to the replica (vLLM-Omni's per-replica in-flight gauge). */
  inflight(replicaId: number): number {
    return this.active[replicaId]?.size ?? 0;
  }

  /** Steps the replica produced that the orchestrator has not polled yet. */
  outputsQueueSize(replicaId: number): number {
    return this.engine(replicaId).bufferedSteps;
  }

  startAll(): void {
    for (const engine of this.engines) engine.start();
  }

  stopAll(): void {
    for (const engine of this.engines) engine.stop();
    this.bindings.clear();
    for (const set of this.active) set.clear();
  }
}
