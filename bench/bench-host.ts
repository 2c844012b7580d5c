import type {
  EngineCoreOutput,
  EngineCoreOutputs,
  OmniRequestOutput,
  ReceiveReceipt,
  StagePoolLike,
  StageRequest,
  TransferReceipt,
} from '../instrumentation/pipeline/host-contract';
import { createSchedulerStats } from '../instrumentation/stats/types';

/** The request shape of the per-request benchmark: a thinker → talker → code2wav pipeline. */
export interface BenchWorkload {
  /** Replicas per stage. */
  readonly pools: readonly number[];
  /** Tokens each stage generates per request (one per engine step). */
  readonly tokens: number;
  /** Requests in flight together: each engine step carries this many outputs. */
  readonly batch: number;
}

export const PIPELINE_3x4: readonly number[] = [4, 4, 4];

/** Fresh host classes: each contender patches its own, so instrumentations never meet. */
export function createBenchHost() {
  class Pool implements StagePoolLike {
    readonly bindings = new Map<string, number>();
    constructor(readonly numReplicas: number) {}
    getBoundReplicaId(requestId: string): number | undefined {
      return this.bindings.get(requestId);
    }
  }

  class Orchestrator {
    readonly stagePools: Pool[];
    constructor(pools: readonly number[]) {
      this.stagePools = pools.map((count) => new Pool(count));
    }
    addRequest(request: { requestId: string }): string {
      return request.requestId;
    }
    cleanupRequest(requestId: string): void {
      for (const pool of this.stagePools) pool.bindings.delete(requestId);
    }
    submitToStage(request: StageRequest): void {
      this.stagePools[request.stageId]?.bindings.set(request.requestId, request.replicaId);
    }
    pollEngine(_stageId: number, _replicaId: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
      return outputs;
    }
    sendToNextStage(receipt: TransferReceipt): TransferReceipt {
      return receipt;
    }
    receiveFromPreviousStage(receipt: ReceiveReceipt): ReceiveReceipt {
      return receipt;
    }
  }

  class Serving {
    async *generate(request: { requestId: string; stageId: number; replicaId: number }): AsyncGenerator<OmniRequestOutput> {
      const { requestId, stageId, replicaId } = request;
      const audio = { audio: new Int16Array(2400), sample_rate: 24000 };
      yield { requestId, stageId, replicaId, finalOutputType: 'audio', finished: false, multimodalOutput: audio };
      yield { requestId, stageId, replicaId, finalOutputType: 'audio', finished: false, multimodalOutput: audio };
      yield {
        requestId,
        stageId,
        replicaId,
        finalOutputType: 'audio',
        finished: true,
        finishReason: 'stop',
        multimodalOutput: { audio: new Int16Array(0), sample_rate: 24000 },
        stageMetrics: [{ stageId, numTokensIn: 100, numTokensOut: 100, stageGenTimeMs: 400, audioGeneratedFrames: 4800 }],
      };
    }
  }

  return { Orchestrator, Serving };
}

export type BenchHost = ReturnType<typeof createBenchHost>;
type Orchestrator = InstanceType<BenchHost['Orchestrator']>;
type Serving = InstanceType<BenchHost['Serving']>;

/** Requests run so far per orchestrator: each contender picks the same replicas in the same order. */
const requestCounts = new WeakMap<object, number>();
let clock = 1000;

/**
 * One batch of requests through every hooked call site: admission, the serving stream, per stage
 * a submission and one engine poll per generated token (each carrying every request of the batch
 * on that replica, with scheduler stats), the hop to the next stage, and cleanup.
 */
export async function runBatch(orchestrator: Orchestrator, serving: Serving, workload: BenchWorkload): Promise<void> {
  const first = requestCounts.get(orchestrator) ?? 0;
  const nextRequest = first + workload.batch;
  requestCounts.set(orchestrator, nextRequest);
  const ids = Array.from({ length: workload.batch }, (_, k) => `req-${first + k}`);
  const replicaOf = (stage: number, k: number): number => (nextRequest + k) % (workload.pools[stage] ?? 1);
  const last = workload.pools.length - 1;
  const streams = ids.map((requestId, k) => serving.generate({ requestId, stageId: last, replicaId: replicaOf(last, k) }));
  for (const [k, requestId] of ids.entries()) {
    orchestrator.addRequest({ requestId });
    await streams[k]?.next();
  }
  for (let stage = 0; stage <= last; stage++) {
    const arrivalTime = clock;
    for (const [k, requestId] of ids.entries()) {
      orchestrator.submitToStage({ requestId, stageId: stage, replicaId: replicaOf(stage, k), arrivalTime, promptTokenCount: 200, maxTokens: workload.tokens });
    }
    const replicas = [...new Set(ids.map((_, k) => replicaOf(stage, k)))];
    for (let step = 0; step < workload.tokens; step++) {
      clock += 0.02;
      for (const replica of replicas) {
        const outputs: EngineCoreOutput[] = [];
        ids.forEach((requestId, k) => {
          if (replicaOf(stage, k) !== replica) return;
          outputs.push({
            requestId,
            numNewTokens: 1,
            finishReason: step === workload.tokens - 1 ? 'length' : null,
            events:
              step === 0
                ? [
                    { type: 'QUEUED', timestamp: clock - 0.01 },
                    { type: 'SCHEDULED', timestamp: clock - 0.005 },
                  ]
                : undefined,
            numCachedTokens: step === 0 ? 64 : undefined,
          });
        });
        const schedulerStats = createSchedulerStats({ numRunningReqs: outputs.length, numWaitingReqs: 0, kvCacheUsage: 0.25 });
        orchestrator.pollEngine(stage, replica, { timestamp: clock, outputs, schedulerStats });
      }
    }
    if (stage < last) {
      for (const [k, requestId] of ids.entries()) {
        orchestrator.sendToNextStage({ requestId, fromStage: stage, toStage: stage + 1, sizeBytes: 4096, txTimeMs: 0.4 });
        orchestrator.receiveFromPreviousStage({ requestId, stageId: stage + 1, replicaId: replicaOf(stage + 1, k), rxDecodeTimeMs: 0.2, inFlightTimeMs: 0.3 });
      }
    }
  }
  for (const [k, requestId] of ids.entries()) {
    const stream = streams[k];
    if (stream) for (let result = await stream.next(); !result.done; result = await stream.next());
    orchestrator.cleanupRequest(requestId);
  }
}
