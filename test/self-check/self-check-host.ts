import type { EngineCoreOutputs, OmniRequestOutput, ReceiveReceipt, StageRequest, TransferReceipt } from '../../instrumentation/pipeline/host-contract';
import { FakePool, finishedAudioOutput, twoStepOutputs } from '../hooks/fake-host';

/**
 * A two-stage host (thinker 1 replica → talker 2 replicas) that calls every hooked method a request
 * needs, except the transfers: admission, stage submission and engine polls.
 */
export class OrchestratorWithoutTransfers {
  readonly stagePools = [new FakePool(1), new FakePool(2)];

  addRequest(_request: { requestId: string }): void {}

  cleanupRequest(requestId: string): void {
    for (const pool of this.stagePools) pool.bindings.delete(requestId);
  }

  submitToStage(request: StageRequest): void {
    this.stagePools[request.stageId]?.bindings.set(request.requestId, request.replicaId);
  }

  /** Step 0: queued, scheduled, one token; step 1: one more token and finished. */
  async pollEngine(_stageId: number, _replicaId: number, requestId: string, step: number): Promise<EngineCoreOutputs> {
    return twoStepOutputs(requestId, step, 0.5);
  }
}

/** The same host with both sides of the cross-stage hop. */
export class FullOrchestrator extends OrchestratorWithoutTransfers {
  sendToNextStage(requestId: string, toReplica: number): TransferReceipt {
    return { requestId, fromStage: 0, toStage: 1, sizeBytes: 2048, txTimeMs: 4, fromReplica: 0, toReplica };
  }

  receiveFromPreviousStage(requestId: string, replicaId: number): ReceiveReceipt {
    return { requestId, stageId: 1, replicaId, rxDecodeTimeMs: 2, inFlightTimeMs: 6 };
  }
}

type AnyOrchestrator = OrchestratorWithoutTransfers & Partial<Pick<FullOrchestrator, 'sendToNextStage' | 'receiveFromPreviousStage'>>;

/** Serving: runs a request through both stages (talker replica `replica`), streams two audio chunks, then the finished output. */
export class SelfCheckServing {
  constructor(readonly orchestrator: AnyOrchestrator) {}

  async *generate(request: { requestId: string; replica: number }): AsyncGenerator<OmniRequestOutput> {
    const { requestId, replica } = request;
    const host = this.orchestrator;
    host.addRequest({ requestId });
    try {
      await runThinker(host, requestId);
      host.sendToNextStage?.(requestId, replica);
      host.submitToStage({ requestId, stageId: 1, replicaId: replica, arrivalTime: Date.now() / 1000, promptTokenCount: 5, maxTokens: 16 });
      host.receiveFromPreviousStage?.(requestId, replica);
      await host.pollEngine(1, replica, requestId, 0);
      await host.pollEngine(1, replica, requestId, 1);
      for (let i = 0; i < 2; i++) {
        yield {
          requestId,
          stageId: 1,
          replicaId: replica,
          finalOutputType: 'audio',
          finished: false,
          multimodalOutput: { audio: new Int16Array(2400), sample_rate: 24000 },
        };
      }
      yield finishedAudioOutput(requestId, replica, [2, 2]);
    } finally {
      host.cleanupRequest(requestId);
    }
  }
}

/** The thinker (stage 0, replica 0) takes the request and answers it in two polls. */
async function runThinker(host: OrchestratorWithoutTransfers, requestId: string): Promise<void> {
  host.submitToStage({ requestId, stageId: 0, replicaId: 0, arrivalTime: Date.now() / 1000, promptTokenCount: 7, maxTokens: 16 });
  await host.pollEngine(0, 0, requestId, 0);
  await host.pollEngine(0, 0, requestId, 1);
}

export async function drain(serving: SelfCheckServing, requestId: string, replica: number): Promise<void> {
  for await (const _ of serving.generate({ requestId, replica }));
}

/** Serving whose requests are text only: the thinker (stage 0) answers, no later stage is reached. */
export class TextOnlyServing {
  constructor(readonly orchestrator: OrchestratorWithoutTransfers) {}

  async *generate(request: { requestId: string }): AsyncGenerator<OmniRequestOutput> {
    const { requestId } = request;
    const host = this.orchestrator;
    host.addRequest({ requestId });
    try {
      await runThinker(host, requestId);
      yield {
        requestId,
        stageId: 0,
        replicaId: 0,
        finalOutputType: 'text',
        finished: true,
        finishReason: 'stop',
        text: 'Hello there!',
        stageMetrics: [{ stageId: 0, numTokensIn: 7, numTokensOut: 2, stageGenTimeMs: 30 }],
      };
    } finally {
      host.cleanupRequest(requestId);
    }
  }
}
