import type { OmniStatLogger } from '../recorders/stat-logger';
import { IterationStats } from '../stats/iteration-stats';
import { RequestStatsBuilder } from '../stats/request-stats-builder';
import { isFinishReason } from '../stats/types';
import { DENSE_KEYS } from '../../views/common/small-int-map';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import type { EngineCoreEvent, EngineCoreOutput, EngineCoreOutputs, StageRequest } from './host-contract';

/** What the feed keeps of one live replica. */
interface ReplicaFeed {
  readonly engineIdx: number;
  readonly builder: RequestStatsBuilder;
}

/**
 * Turns what the host's engines report (stage submissions, polled engine-core outputs) into
 * vLLM's iteration statistics per (stage, replica), and hands them to the stat logger: the
 * frontend `OutputProcessor` + `record()` pair of vLLM, one builder per replica.
 */
export class EngineStatsFeed {
  /**
   * Per engine index of a live replica: its builder. A replica that leaves takes it (and the
   * requests it tracked) with it.
   */
  private readonly replicas = new Map<number, ReplicaFeed>();
  /**
   * The same feeds by stage and replica id (ids the stage/replica map keeps in arrays): a poll
   * names its replica so, and finds its feed with two array reads instead of a map lookup.
   */
  private readonly polledReplicas: Array<Array<ReplicaFeed | undefined> | undefined> = [];
  /**
   * Replicas (engine indices) each live request was submitted to, so release touches only those
   * (and nothing leaks). A list, not a set: a request visits a replica or two per stage, and a
   * set per request cost more to make than the few comparisons a lookup in the list takes.
   */
  private readonly enginesByRequest = new Map<string, number[]>();
  private readonly unsubscribe: () => void;
  /**
   * The one IterationStats every poll fills: polls are handled one at a time, and the stat logger
   * and its sinks read it during `record()` only.
   */
  private readonly iteration = new IterationStats();

  constructor(
    private readonly stageReplicaMap: StageReplicaMap,
    private readonly statLogger: OmniStatLogger,
  ) {
    // An engine index is never handed out again once its replica is removed: its builder can only leak.
    this.unsubscribe = stageReplicaMap.onChange((change) => {
      if (change.kind !== 'removed') return;
      this.replicas.delete(change.engineIndex);
      const row = this.polledReplicas[change.stage];
      if (row?.[change.replica]?.engineIdx === change.engineIndex) row[change.replica] = undefined;
    });
  }

  /** Replicas with statistics being built (for tests and diagnostics). */
  get trackedEngines(): number {
    return this.replicas.size;
  }

  /** Stops following replica changes and forgets every replica's statistics. */
  stop(): void {
    this.unsubscribe();
    this.replicas.clear();
    this.polledReplicas.length = 0;
    this.enginesByRequest.clear();
  }

  submitted(request: StageRequest): void {
    const engineIdx = this.stageReplicaMap.engineIndex(request.stageId, request.replicaId);
    if (engineIdx === undefined) return;
    const engines = this.enginesByRequest.get(request.requestId);
    if (engines === undefined) this.enginesByRequest.set(request.requestId, [engineIdx]);
    else if (!engines.includes(engineIdx)) engines.push(engineIdx);
    this.replica(engineIdx).builder.arrived(request.requestId, {
      arrivalTime: request.arrivalTime,
      promptTokens: request.promptTokenCount,
      maxTokens: request.maxTokens,
      n: request.n,
    });
  }

  /**
   * One poll of one replica, as vLLM's frontend handles a batch of engine-core outputs: each
   * output applied as it comes to the poll's `IterationStats` (none for a poll without outputs),
   * then the stat logger's `record(scheduler, iteration, engine)`. The iteration's wall-clock
   * stamp is read when the poll's first TTFT or e2e needs it, so a poll of decode steps reads no clock.
   */
  polled(stageId: number, replicaId: number, outputs: EngineCoreOutputs): void {
    const engineIdx = this.stageReplicaMap.engineIndex(stageId, replicaId);
    if (engineIdx === undefined) return;
    const builder = this.polledReplica(stageId, replicaId, engineIdx).builder;
    const list = outputs.outputs;
    let iteration: IterationStats | undefined;
    if (list.length !== 0) {
      iteration = builder.startIteration(undefined, this.iteration);
      for (let i = 0; i < list.length; i++) this.applyOutput(builder, engineIdx, list[i] as EngineCoreOutput, outputs.timestamp);
      builder.endIteration();
    }
    this.statLogger.record(outputs.schedulerStats, iteration, engineIdx);
  }

  /** One engine-core output of a poll: its events, its new tokens, its finish (vLLM's `OutputProcessor.process_outputs`, per request). */
  private applyOutput(builder: RequestStatsBuilder, engineIdx: number, output: EngineCoreOutput, ts: number): void {
    const id = output.requestId;
    const events = output.events;
    if (events) {
      for (let e = 0; e < events.length; e++) {
        const event = events[e] as EngineCoreEvent;
        if (event.type === 'QUEUED') builder.queued(id, event.timestamp);
        else if (event.type === 'SCHEDULED') builder.scheduled(id, event.timestamp, { cachedTokens: output.numCachedTokens });
        else if (event.type === 'PREEMPTED') builder.preempted(id, event.timestamp);
      }
    }
    if (output.numNewTokens > 0) builder.newTokens(id, output.numNewTokens, ts);
    if (output.finishReason && isFinishReason(output.finishReason)) {
      builder.finished(id, output.finishReason, ts);
      this.forget(id, engineIdx);
    }
  }

  /** The request left the pipeline (finished, aborted or failed): forget it on every replica. */
  released(requestId: string): void {
    for (const engineIdx of this.enginesByRequest.get(requestId) ?? []) this.replicas.get(engineIdx)?.builder.aborted(requestId);
    this.enginesByRequest.delete(requestId);
  }

  private forget(requestId: string, engineIdx: number): void {
    const engines = this.enginesByRequest.get(requestId);
    if (engines === undefined) return;
    const at = engines.indexOf(engineIdx);
    if (at < 0) return;
    // The order is no one's concern: the last one takes the freed place (`splice` would allocate).
    engines[at] = engines[engines.length - 1] as number;
    engines.pop();
    if (engines.length === 0) this.enginesByRequest.delete(requestId);
  }

  /** The feed of the replica a poll names (`engineIdx`: its engine index now). */
  private polledReplica(stageId: number, replicaId: number, engineIdx: number): ReplicaFeed {
    const known = this.polledReplicas[stageId]?.[replicaId];
    if (known !== undefined && known.engineIdx === engineIdx) return known;
    const replica = this.replica(engineIdx);
    if (replicaId < DENSE_KEYS) (this.polledReplicas[stageId] ??= [])[replicaId] = replica;
    return replica;
  }

  private replica(engineIdx: number): ReplicaFeed {
    let replica = this.replicas.get(engineIdx);
    if (replica === undefined) {
      replica = { engineIdx, builder: new RequestStatsBuilder() };
      this.replicas.set(engineIdx, replica);
    }
    return replica;
  }
}
