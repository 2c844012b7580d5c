import type { StagePoolLike } from 'omni-otel-metrics';
import type { StageEngine } from './stage-engine';

/** Builds the engine of one replica of a stage (a new replica gets a new, seeded engine). */
export type ReplicaFactory = (replicaId: number) => StageEngine;

/** One replica: its engine, the requests whose work on it is unfinished, and whether it is draining. */
interface Replica {
  readonly engine: StageEngine;
  readonly active: Set<string>;
  draining: boolean;
}

/**
 * The replicas of one stage, with sticky routing: a request is bound to the least-loaded replica
 * the first time it reaches the stage and stays there until `release`. Load is the number of
 * requests whose work on the stage is unfinished (bound and not yet `markDone`), so requests that
 * moved on to the next stage do not count against the replica that served them.
 *
 * Replicas come and go while serving: `addReplica` builds one with the next id (ids are never
 * reused), `drain` stops routing to one so it can leave once its requests are done, and
 * `removeReplica` takes it out.
 */
export class StagePool implements StagePoolLike {
  readonly stageId: number;
  private readonly createEngine: ReplicaFactory;
  private readonly replicas = new Map<number, Replica>();
  private readonly bindings = new Map<string, number>();
  private nextReplicaId = 0;
  private running = false;
  /** Where the next tie-break scan starts, so equal loads rotate instead of piling onto one replica. */
  private nextStart = 0;

  constructor(stageId: number, createEngine: ReplicaFactory, initialReplicas: number) {
    if (!Number.isInteger(initialReplicas) || initialReplicas < 1) throw new RangeError(`stage ${stageId} needs at least one replica`);
    this.stageId = stageId;
    this.createEngine = createEngine;
    for (let i = 0; i < initialReplicas; i++) this.addReplica();
  }

  get numReplicas(): number {
    return this.replicas.size;
  }

  /** Ids of the replicas now in the pool, draining ones included, ascending. */
  replicaIds(): number[] {
    return [...this.replicas.keys()];
  }

  /** Ids of the replicas being drained. */
  drainingIds(): number[] {
    return [...this.replicas].filter(([, replica]) => replica.draining).map(([id]) => id);
  }

  getBoundReplicaId(requestId: string): number | undefined {
    return this.bindings.get(requestId);
  }

  /** The request's replica: its existing binding, or the least-loaded replica that is not draining, now bound. */
  bind(requestId: string): number {
    const existing = this.bindings.get(requestId);
    if (existing !== undefined) return existing;
    const candidates = [...this.replicas].filter(([, replica]) => !replica.draining);
    if (candidates.length === 0) throw new Error(`stage ${this.stageId} has no replica taking requests`);
    let best = candidates[this.nextStart % candidates.length];
    for (let offset = 1; offset < candidates.length; offset++) {
      const candidate = candidates[(this.nextStart + offset) % candidates.length];
      if (candidate[1].active.size < best[1].active.size) best = candidate;
    }
    this.nextStart = (candidates.indexOf(best) + 1) % candidates.length;
    const [replicaId, replica] = best;
    this.bindings.set(requestId, replicaId);
    replica.active.add(requestId);
    return replicaId;
  }

  /** The request's work on this stage is over; it keeps its binding until `release`. */
  markDone(requestId: string): void {
    const replicaId = this.bindings.get(requestId);
    if (replicaId !== undefined) this.replicas.get(replicaId)?.active.delete(requestId);
  }

  /** Drops the binding; later lookups return undefined. Unknown ids are ignored. */
  release(requestId: string): void {
    this.markDone(requestId);
    this.bindings.delete(requestId);
  }

  engine(replicaId: number): StageEngine {
    const replica = this.replicas.get(replicaId);
    if (replica === undefined) throw new RangeError(`stage ${this.stageId} has no replica ${replicaId}`);
    return replica.engine;
  }

  /** Requests currently routed to the replica (vLLM-Omni's per-replica in-flight gauge). */
  inflight(replicaId: number): number {
    return this.replicas.get(replicaId)?.active.size ?? 0;
  }

  /** Steps the replica produced that the orchestrator has not polled yet. */
  outputsQueueSize(replicaId: number): number {
    return this.engine(replicaId).bufferedSteps;
  }

  /** A new replica with the next id, started when the pool is; returns its id. */
  addReplica(): number {
    const replicaId = this.nextReplicaId++;
    const engine = this.createEngine(replicaId);
    this.replicas.set(replicaId, { engine, active: new Set(), draining: false });
    if (this.running) engine.start();
    return replicaId;
  }

  /** Routes no new request to the replica; it may leave once `isDrained`. False when there is no such replica or it is the last one taking requests. */
  drain(replicaId: number): boolean {
    const replica = this.replicas.get(replicaId);
    if (replica === undefined || replica.draining) return false;
    if ([...this.replicas.values()].filter((r) => !r.draining).length === 1) return false;
    replica.draining = true;
    return true;
  }

  /** A draining replica no request is bound to any more. */
  isDrained(replicaId: number): boolean {
    const replica = this.replicas.get(replicaId);
    return replica !== undefined && replica.draining && ![...this.bindings.values()].includes(replicaId);
  }

  /** Takes the replica out and stops its engine; returns the requests that were still bound to it. */
  removeReplica(replicaId: number): string[] {
    const replica = this.replicas.get(replicaId);
    if (replica === undefined) return [];
    replica.engine.stop();
    this.replicas.delete(replicaId);
    const stranded = [...this.bindings].filter(([, id]) => id === replicaId).map(([requestId]) => requestId);
    for (const requestId of stranded) this.bindings.delete(requestId);
    return stranded;
  }

  startAll(): void {
    this.running = true;
    for (const { engine } of this.replicas.values()) engine.start();
  }

  stopAll(): void {
    this.running = false;
    for (const { engine } of this.replicas.values()) engine.stop();
    this.bindings.clear();
    for (const { active } of this.replicas.values()) active.clear();
  }
}
