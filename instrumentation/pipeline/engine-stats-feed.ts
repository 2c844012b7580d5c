import type { OmniStatLogger } from '../recorders/stat-logger';
import { wallClockSeconds } from '../stats/clock';
import { RequestStatsBuilder } from '../stats/request-stats-builder';
import { isFinishReason } from '../stats/types';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import type { EngineCoreOutputs, StageRequest } from './host-contract';

/**
 * Turns what the host's engines report (stage submissions, polled engine-core outputs) into
 * vLLM's iteration statistics per (stage, replica), and hands them to the stat logger: the
 * frontend `OutputProcessor` + `record()` pair of vLLM, one builder per replica.
 */
export class EngineStatsFeed {
  private readonly builders: RequestStatsBuilder[] = [];
  /** Replicas each live request was submitted to, so release touches only those (and nothing leaks). */
  private readonly enginesByRequest = new Map<string, Set<number>>();

  constructor(private readonly stageReplicaMap: StageReplicaMap) {}

  submitted(request: StageRequest): void {
    const engineIdx = this.stageReplicaMap.engineIndex(request.stageId, request.replicaId);
    if (engineIdx === undefined) return;
    let engines = this.enginesByRequest.get(request.requestId);
    if (engines === undefined) {
      engines = new Set();
      this.enginesByRequest.set(request.requestId, engines);
    }
    engines.add(engineIdx);
    this.builder(engineIdx).arrived(request.requestId, {
      arrivalTime: request.arrivalTime,
      promptTokens: request.promptTokenCount,
      maxTokens: request.maxTokens,
      n: request.n,
    });
  }

  polled(stageId: number, replicaId: number, outputs: EngineCoreOutputs, statLogger: OmniStatLogger): void {
    const engineIdx = this.stageReplicaMap.engineIndex(stageId, replicaId);
    if (engineIdx === undefined) return;
    const builder = this.builder(engineIdx);
    const ts = outputs.timestamp;
    for (const output of outputs.outputs) {
      const id = output.requestId;
      for (const event of output.events ?? []) {
        if (event.type === 'QUEUED') builder.queued(id, event.timestamp);
        else if (event.type === 'SCHEDULED') builder.scheduled(id, event.timestamp, { cachedTokens: output.numCachedTokens });
        else if (event.type === 'PREEMPTED') builder.preempted(id, event.timestamp);
      }
      if (output.numNewTokens > 0) builder.newTokens(id, output.numNewTokens, ts);
      if (output.finishReason && isFinishReason(output.finishReason)) {
        builder.finished(id, output.finishReason, ts);
        this.forget(id, engineIdx);
      }
    }
    // A stats-only poll (no request outputs) has no iteration to build.
    const iteration = outputs.outputs.length > 0 ? builder.takeIterationStats(wallClockSeconds()) : undefined;
    statLogger.record(outputs.schedulerStats ?? undefined, iteration, engineIdx);
  }

  /** The request left the pipeline (finished, aborted or failed): forget it on every replica. */
  released(requestId: string): void {
    for (const engineIdx of this.enginesByRequest.get(requestId) ?? []) this.builders[engineIdx]?.aborted(requestId);
    this.enginesByRequest.delete(requestId);
  }

  private forget(requestId: string, engineIdx: number): void {
    const engines = this.enginesByRequest.get(requestId);
    engines?.delete(engineIdx);
    if (engines?.size === 0) this.enginesByRequest.delete(requestId);
  }

  private builder(engineIdx: number): RequestStatsBuilder {
    let builder = this.builders[engineIdx];
    if (builder === undefined) {
      builder = new RequestStatsBuilder();
      this.builders[engineIdx] = builder;
    }
    return builder;
  }
}
