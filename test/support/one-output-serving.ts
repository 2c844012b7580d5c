import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';

/** The one output of a request served in a single step: final, text, stage 0 replica 0. */
export function finishedOutput(requestId: string): OmniRequestOutput {
  return { requestId, stageId: 0, replicaId: 0, finalOutputType: 'text', finished: true, finishReason: 'stop' };
}

/** A fresh serving class (each test patches its own) whose `generate` yields `finishedOutput` once. */
export function oneOutputServing() {
  return class Serving {
    async *generate(request: { requestId: string; traceparent: string }): AsyncGenerator<OmniRequestOutput> {
      yield finishedOutput(request.requestId);
    }
  };
}
