import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { EngineCoreOutput, EngineCoreOutputs, StageRequest } from '../../instrumentation/pipeline/host-contract';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import { sampleValue } from '../support/exposition';
import { quietHandle } from '../support/quiet-handle';

const REPLICA = { model_name: 'm', stage: '0', replica: '0' };

class Orchestrator {
  readonly stagePools = [];
  submitToStage(_request: StageRequest): void {}
  pollEngine(_stage: number, _replica: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
    return outputs;
  }
}

function poll(timestamp: number, outputs: EngineCoreOutput[]): EngineCoreOutputs {
  return { timestamp, outputs, schedulerStats: createSchedulerStats({ numRunningReqs: outputs.length }) };
}

describe('decode steps applied as they come', () => {
  it('polls mixing decode steps with prefills, preemptions and finishes count every token once, one iteration-tokens observation a poll', async () => {
    const handle = await quietHandle({ stagePools: [1], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
    try {
      const host = new Orchestrator();
      host.submitToStage({ requestId: 'a', stageId: 0, replicaId: 0, arrivalTime: 1, promptTokenCount: 10, maxTokens: 100 });
      host.submitToStage({ requestId: 'b', stageId: 0, replicaId: 0, arrivalTime: 1, promptTokenCount: 20, maxTokens: 100 });
      // Both prefill: 30 prompt tokens computed and 2 generated.
      host.pollEngine(
        0,
        0,
        poll(100, [
          {
            requestId: 'a',
            numNewTokens: 1,
            events: [
              { type: 'QUEUED', timestamp: 99 },
              { type: 'SCHEDULED', timestamp: 99.5 },
            ],
          },
          {
            requestId: 'b',
            numNewTokens: 1,
            events: [
              { type: 'QUEUED', timestamp: 99 },
              { type: 'SCHEDULED', timestamp: 99.5 },
            ],
          },
        ]),
      );
      // a: a decode step; b: two tokens of a step that also reports a preemption.
      host.pollEngine(
        0,
        0,
        poll(100.5, [
          { requestId: 'a', numNewTokens: 1 },
          { requestId: 'b', numNewTokens: 2, events: [{ type: 'PREEMPTED', timestamp: 100.25 }] },
        ]),
      );
      // Decode steps only.
      host.pollEngine(
        0,
        0,
        poll(101, [
          { requestId: 'a', numNewTokens: 1 },
          { requestId: 'b', numNewTokens: 1 },
        ]),
      );
      // a finishes with its last token; b decodes.
      host.pollEngine(
        0,
        0,
        poll(102, [
          { requestId: 'a', numNewTokens: 1, finishReason: 'length' },
          { requestId: 'b', numNewTokens: 1 },
        ]),
      );

      const text = await handle.metricsText();
      const value = (name: string, labels: Record<string, string> = REPLICA): number | undefined => sampleValue(text, name, labels);
      assert.equal(value('vllm:generation_tokens_total'), 9);
      assert.equal(value('vllm:prompt_tokens_total'), 30);
      assert.equal(value('vllm:iteration_tokens_total_count'), 4);
      assert.equal(value('vllm:iteration_tokens_total_sum'), 32 + 3 + 2 + 2);
      assert.equal(value('vllm:inter_token_latency_seconds_count'), 6);
      assert.equal(value('vllm:inter_token_latency_seconds_sum'), 0.5 + 0.5 + 0.5 + 0.5 + 1 + 1);
      assert.equal(value('vllm:inter_token_latency_seconds_bucket', { ...REPLICA, le: '0.5' }), 4);
      assert.equal(value('vllm:num_preemptions_total'), 1);
      assert.equal(value('vllm:request_success_total', { ...REPLICA, finished_reason: 'length' }), 1);
      assert.equal(value('vllm:request_generation_tokens_sum'), 4);
      assert.equal(value('vllm:request_decode_time_seconds_sum'), 2);
      assert.equal(value('vllm:num_requests_running'), 2);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
