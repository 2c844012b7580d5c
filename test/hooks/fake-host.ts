import type {
  EngineCoreOutputs,
  OmniRequestOutput,
  ReceiveReceipt,
  StagePoolLike,
  StageRequest,
  TransferReceipt,
} from '../../instrumentation/pipeline/host-contract';
import { createSchedulerStats } from '../../instrumentation/stats/types';

/** A minimal host that implements the contract with scripted, deterministic behaviour. */
export class FakePool implements StagePoolLike {
  readonly bindings = new Map<string, number>();
  constructor(readonly numReplicas: number) {}
  getBoundReplicaId(requestId: string): number | undefined {
    return this.bindings.get(requestId);
  }
}

export class FakeOrchestrator {
  readonly stagePools = [new FakePool(1), new FakePool(2)];
  readonly live = new Set<string>();
  cleanups = 0;

  addRequest(request: { requestId: string }): string {
    this.live.add(request.requestId);
    return `added:${request.requestId}`;
  }

  cleanupRequest(requestId: string): void {
    this.cleanups++;
    this.live.delete(requestId);
  }

  submitToStage(request: StageRequest): void {
    this.stagePools[request.stageId]?.bindings.set(request.requestId, request.replicaId);
  }

  async pollEngine(stageId: number, replicaId: number, requestId = 'r', step = 0): Promise<EngineCoreOutputs> {
    return twoStepOutputs(requestId, step, 0.5 + stageId * 0.1 + replicaId * 0.01);
  }

  sendToNextStage(requestId: string): TransferReceipt {
    return { requestId, fromStage: 0, toStage: 1, sizeBytes: 2048, txTimeMs: 4 };
  }

  receiveFromPreviousStage(requestId: string): ReceiveReceipt {
    return { requestId, stageId: 1, replicaId: 1, rxDecodeTimeMs: 2, inFlightTimeMs: 6 };
  }
}

/** Serving: yields two audio chunks then a finished output; can be told to fail mid-stream. */
export class FakeServing {
  constructor(readonly orchestrator: FakeOrchestrator) {}

  async *generate(request: { requestId: string; fail?: boolean; chunks?: number }): AsyncGenerator<OmniRequestOutput> {
    const { requestId } = request;
    this.orchestrator.addRequest({ requestId });
    try {
      for (let i = 0; i < (request.chunks ?? 2); i++) {
        if (request.fail && i === 1) throw new Error('engine exploded');
        yield {
          requestId,
          stageId: 1,
          replicaId: 1,
          finalOutputType: 'audio',
          finished: false,
          multimodalOutput: { audio: new Int16Array(2400), sample_rate: 24000 },
        };
      }
      yield finishedAudioOutput(requestId, 1, [5, 9]);
    } finally {
      this.orchestrator.cleanupRequest(requestId);
    }
  }
}

/** The finished output of a thinker → talker audio request served by talker `replicaId`: 4800 frames, `tokensOut` per stage. */
export function finishedAudioOutput(requestId: string, replicaId: number, tokensOut: readonly [number, number]): OmniRequestOutput {
  return {
    requestId,
    stageId: 1,
    replicaId,
    finalOutputType: 'audio',
    finished: true,
    finishReason: 'stop',
    multimodalOutput: { audio: new Int16Array(0), sample_rate: 24000 },
    stageMetrics: [
      { stageId: 0, numTokensIn: 7, numTokensOut: tokensOut[0], stageGenTimeMs: 30 },
      { stageId: 1, numTokensIn: 5, numTokensOut: tokensOut[1], stageGenTimeMs: 50, audioGeneratedFrames: 4800 },
    ],
  };
}

/**
 * One request's engine outputs over two polls: step 0 queued, scheduled and one token; step 1 one
 * more token and finished. Scheduler stats report one running request at `kvCacheUsage`.
 */
export function twoStepOutputs(requestId: string, step: number, kvCacheUsage: number): EngineCoreOutputs {
  const base = 100 + step;
  return {
    timestamp: base + 0.5,
    outputs:
      step === 0
        ? [
            {
              requestId,
              numNewTokens: 1,
              numCachedTokens: 0,
              events: [
                { type: 'QUEUED', timestamp: base },
                { type: 'SCHEDULED', timestamp: base + 0.25 },
              ],
            },
          ]
        : [{ requestId, numNewTokens: 1, finishReason: 'stop' }],
    schedulerStats: createSchedulerStats({ numRunningReqs: 1, kvCacheUsage }),
  };
}
