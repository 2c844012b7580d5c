import type { EngineCoreOutput, EngineCoreOutputs, OmniRequestOutput, ReceiveReceipt, StagePoolLike, StageRequest, TransferReceipt } from '../index';
// From its own file, not the root: through tsx each call of a root re-export reads a getter, which
// cost the host about 31 000 instructions a request (a scheduler record per poll).
import { createSchedulerStats } from '../instrumentation/stats/types';

/** The request shape of the per-request benchmark: a thinker → talker → code2wav pipeline. */
export interface BenchWorkload {
  /** Replicas per stage. */
  readonly pools: readonly number[];
  /** Tokens each stage generates per request (one per engine step). */
  readonly tokens: number;
  /** Requests in flight together: each engine step carries this many outputs. */
  readonly batch: number;
  /** A W3C `traceparent` every served request carries (a traced client), or none. */
  readonly traceparent?: string;
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
    /**
     * The last batch polled: a real host hands its outputs on to the serving layer. Kept here so
     * that V8 cannot drop the batches the bench builds for a host whose poll ignores them, which
     * would make the host alone cheaper than any host that reads its outputs.
     */
    lastPolled: EngineCoreOutputs | undefined;
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
      this.lastPolled = outputs;
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
    async *generate(request: { requestId: string; stageId: number; replicaId: number; traceparent?: string }): AsyncGenerator<OmniRequestOutput> {
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

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

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
  const traceparent = workload.traceparent;
  const streams = ids.map((requestId, k) =>
    serving.generate(
      traceparent === undefined
        ? { requestId, stageId: last, replicaId: replicaOf(last, k) }
        : { requestId, stageId: last, replicaId: replicaOf(last, k), traceparent },
    ),
  );
  for (const [k, requestId] of ids.entries()) {
    orchestrator.addRequest({ requestId });
    await streams[k]?.next();
  }
  for (let stage = 0; stage <= last; stage++) {
    const arrivalTime = clock;
    for (const [k, requestId] of ids.entries()) {
      orchestrator.submitToStage({ requestId, stageId: stage, replicaId: replicaOf(stage, k), arrivalTime, promptTokenCount: 200, maxTokens: workload.tokens });
    }
    // One batch object per replica for the whole stage, its fields rewritten each step: the host's
    // own allocations stay out of the figures (a fresh batch per step made the host's time, and its
    // garbage collections, larger than the floor's whole cost, so differences drowned in noise).
    const batches = [...new Set(ids.map((_, k) => replicaOf(stage, k)))].map((replica) => {
      const outputs: Array<Mutable<EngineCoreOutput>> = [];
      ids.forEach((requestId, k) => {
        if (replicaOf(stage, k) === replica) outputs.push({ requestId, numNewTokens: 1, finishReason: null, events: undefined, numCachedTokens: undefined });
      });
      const schedulerStats = createSchedulerStats({ numRunningReqs: outputs.length, numWaitingReqs: 0, kvCacheUsage: 0.25 });
      return { replica, polled: { timestamp: clock, outputs, schedulerStats } satisfies EngineCoreOutputs };
    });
    for (let step = 0; step < workload.tokens; step++) {
      clock += 0.02;
      for (const { replica, polled } of batches) {
        polled.timestamp = clock;
        for (const output of polled.outputs) {
          output.finishReason = step === workload.tokens - 1 ? 'length' : null;
          output.events =
            step === 0
              ? [
                  { type: 'QUEUED', timestamp: clock - 0.01 },
                  { type: 'SCHEDULED', timestamp: clock - 0.005 },
                ]
              : undefined;
          output.numCachedTokens = step === 0 ? 64 : undefined;
        }
        orchestrator.pollEngine(stage, replica, polled);
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
