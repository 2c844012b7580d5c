import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { context, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OMNI_CHANNELS } from '../../instrumentation/hooks/channels';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { EngineCoreOutputs } from '../../instrumentation/pipeline/host-contract';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import { hostCallCountsOf } from '../../instrumentation/self-check/host-calls';
import { finishedOutput, oneOutputServing } from '../support/one-output-serving';
import { quietHandle } from '../support/quiet-handle';

const SPAN: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };

class Orchestrator {
  readonly stagePools = [];
  submitToStage(_request: unknown): void {}
  pollEngine(_stageId: number, _replicaId: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
    return outputs;
  }
}

function firstToken(requestId: string): EngineCoreOutputs {
  return { timestamp: 2, outputs: [{ requestId, numNewTokens: 1 }], schedulerStats: createSchedulerStats({ numRunningReqs: 1 }) };
}

/** The `vllm:time_to_first_token_seconds` bucket lines of one replica that carry an exemplar, split at the exemplar's value. */
function ttftExemplars(text: string, replica: number): Array<{ line: string; value: number }> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('vllm:time_to_first_token_seconds_bucket{') && line.includes(`replica="${replica}"`) && line.includes(' # '))
    .map((line) => {
      const [, head, value] = /^(.* # \{[^}]*\}) (\S+)/.exec(line) ?? [];
      return { line: head ?? line, value: Number(value) };
    });
}

describe('the hooks and the diagnostics channels are one path', () => {
  it('a poll published on the channel is counted and observed as a wrapped poll is, its exemplar taken from the span active where it was published', async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    const handle = await quietHandle({
      stagePools: [2],
      logStats: true,
      exemplars: true,
    });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator });
    try {
      const host = new Orchestrator();
      const now = Date.now() / 1000;
      // Replica 0 through the wrapped methods, replica 1 through the channels; both polls inside the same span.
      host.submitToStage({ requestId: 'a', stageId: 0, replicaId: 0, arrivalTime: now - 0.3, promptTokenCount: 4 });
      diagnosticsChannel
        .channel(OMNI_CHANNELS.submitToStage)
        .publish({ requestId: 'b', stageId: 0, replicaId: 1, arrivalTime: now - 0.3, promptTokenCount: 4 });
      context.with(trace.setSpanContext(ROOT_CONTEXT, SPAN), () => {
        host.pollEngine(0, 0, firstToken('a'));
        diagnosticsChannel.channel(OMNI_CHANNELS.enginePolled).publish({ stageId: 0, replicaId: 1, outputs: firstToken('b') });
      });
      const calls = hostCallCountsOf(handle);
      assert.equal(calls?.count('submitToStage'), 2);
      assert.equal(calls?.count('pollEngine'), 2);
      assert.equal(calls?.pollsOf(0), 1);
      assert.equal(calls?.pollsOf(1), 1);
      const text = await handle.metricsText('openmetrics');
      const wrapped = ttftExemplars(text, 0);
      const published = ttftExemplars(text, 1);
      assert.deepEqual(
        wrapped.map(({ line }) => line),
        [`vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="m",replica="0",stage="0"} 1.0 # {span_id="${SPAN.spanId}",trace_id="${SPAN.traceId}"}`],
      );
      assert.deepEqual(
        published.map(({ line }) => line),
        wrapped.map(({ line }) => line.replace('replica="0"', 'replica="1"')),
      );
      // The request arrived 0.3 s before its first token, on the wall clock both polls read. Read within
      // the same millisecond as the arrival was computed, `now - (now - 0.3)` rounds to 0.29999995: seconds
      // since the epoch keep about 7 digits after the point.
      for (const { value } of [...wrapped, ...published]) assert.ok(value >= 0.3 - 1e-6 && value < 0.5, `TTFT exemplar ${value}`);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
      context.disable();
    }
  });

  it("a served request published on the channels is traced as a wrapped one: its records' exemplars carry its traceparent's trace", async () => {
    const handle = await quietHandle({
      stagePools: [1],
      logStats: true,
      exemplars: true,
    });
    const Serving = oneOutputServing();
    const instrumentation = new OmniInstrumentation({ metrics: handle, servingClass: Serving });
    const traceparent = (spanId: string): string => `00-${SPAN.traceId}-${spanId}-01`;
    try {
      for await (const output of new Serving().generate({ requestId: 'wrapped', traceparent: traceparent('00f067aa0ba90001') }))
        assert.equal(output.finished, true);
      // The same request told over the channels, its outputs published from an engine loop with no span active.
      diagnosticsChannel.channel(OMNI_CHANNELS.generateStart).publish({ requestId: 'published', traceparent: traceparent('00f067aa0ba90002') });
      diagnosticsChannel.channel(OMNI_CHANNELS.generateOutput).publish({ requestId: 'published', output: finishedOutput('published') });
      diagnosticsChannel.channel(OMNI_CHANNELS.generateEnd).publish({ requestId: 'published', outcome: 'completed' });
      const text = await handle.metricsText('openmetrics');
      const spanIds = (family: string): string[] =>
        text
          .split('\n')
          .filter((line) => line.startsWith(family) && line.includes(' # '))
          .map((line) => /span_id="([0-9a-f]+)",trace_id="([0-9a-f]+)"/.exec(line)?.slice(1).join(' ') ?? line);
      const both = [`00f067aa0ba90001 ${SPAN.traceId}`, `00f067aa0ba90002 ${SPAN.traceId}`];
      // Both requests finished within the first bucket: its exemplar is the later one; the counter's too.
      assert.deepEqual(spanIds('vllm:omni_requests_success_total'), [both[1]]);
      assert.deepEqual(spanIds('vllm:omni_e2e_request_latency_s_bucket'), [both[1]]);
      assert.equal(/vllm:omni_requests_success_total\{finished_reason="stop",model_name="m"\} 2\.0 /.test(text), true);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
