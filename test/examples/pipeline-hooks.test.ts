import * as assert from 'node:assert/strict';

import type { EngineCoreOutputs, ReceiveReceipt, StageRequest, TransferReceipt } from '../../instrumentation/pipeline/host-contract';
import { AsyncOmni, type PipelineOutput } from '../../examples/pipeline/async-omni';
import { Orchestrator } from '../../examples/pipeline/orchestrator';
import { createSimulatedPipeline, type SimulatedPipeline } from '../../examples/pipeline/simulated-pipeline';
import { FAST_PROFILE } from '../../examples/pipeline/simulation-profile';

type Method = (this: unknown, ...args: unknown[]) => unknown;
const HOOKED = ['addRequest', 'cleanupRequest', 'submitToStage', 'pollEngine', 'sendToNextStage', 'receiveFromPreviousStage'] as const;

interface Call {
  readonly name: string;
  readonly args: unknown[];
  readonly result: unknown;
}

/**
 * Wraps the prototype methods the way OmniInstrumentation does (after the pipeline objects exist),
 * so the test sees exactly the calls a prototype patch sees.
 */
function spyOnPrototypes(): { calls: Call[]; restore(): void } {
  const calls: Call[] = [];
  const originals: Array<[object, string, Method]> = [];
  const wrap = (proto: object, name: string): void => {
    const original = (proto as Record<string, Method>)[name];
    originals.push([proto, name, original]);
    (proto as Record<string, Method>)[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      calls.push({ name, args, result });
      return result;
    };
  };
  for (const name of HOOKED) wrap(Orchestrator.prototype, name);
  wrap(AsyncOmni.prototype, 'generate');
  return {
    calls,
    restore: () => {
      for (const [proto, name, original] of originals) (proto as Record<string, Method>)[name] = original;
    },
  };
}

async function collect(outputs: AsyncIterable<PipelineOutput>): Promise<PipelineOutput[]> {
  const all: PipelineOutput[] = [];
  for await (const output of outputs) all.push(output);
  return all;
}

describe('examples: the pipeline as the instrumentation sees it (host-contract call sites)', function () {
  this.timeout(10_000);
  let pipeline: SimulatedPipeline;
  let spy: ReturnType<typeof spyOnPrototypes>;

  beforeEach(() => {
    pipeline = createSimulatedPipeline({
      replicas: [1, 2, 1],
      profile: FAST_PROFILE,
      overrides: { code2wav: { malformedProbability: 0 } },
      seed: 5,
      maxModelLen: 4096,
    });
    pipeline.start();
    spy = spyOnPrototypes();
  });

  afterEach(() => {
    spy.restore();
    pipeline.stop();
  });

  const names = (): string[] => spy.calls.map((c) => c.name);
  const count = (name: string): number => names().filter((n) => n === name).length;

  it('an audio request: one add, a submit per stage, hops with receipts, polls of every replica, one cleanup after the last output', async () => {
    const outputs = await collect(
      pipeline.omni.generate({ requestId: 'audio-1', prompt: 'say something nice about rivers', maxTokens: 20, modalities: ['text', 'audio'] }),
    );

    assert.equal(count('generate'), 1);
    assert.equal(count('addRequest'), 1);
    assert.equal(count('cleanupRequest'), 1);
    assert.equal(names().at(-1), 'cleanupRequest', 'cleanup comes after everything else');
    const submits = spy.calls.filter((c) => c.name === 'submitToStage').map((c) => c.args[0] as StageRequest);
    assert.deepEqual(
      submits.map((s) => s.stageId),
      [0, 1, 2],
    );
    for (const s of submits) {
      assert.equal(typeof s.arrivalTime, 'number');
      assert.ok(s.promptTokenCount > 0);
    }

    const sends = spy.calls.filter((c) => c.name === 'sendToNextStage').map((c) => c.result as TransferReceipt);
    const receives = spy.calls.filter((c) => c.name === 'receiveFromPreviousStage').map((c) => c.result as ReceiveReceipt);
    assert.ok(sends.length >= 2, 'thinker → talker once, talker → code2wav per chunk');
    assert.equal(receives.length, sends.length);
    for (const r of sends) {
      assert.ok(r.sizeBytes > 0 && r.txTimeMs >= 0);
      assert.equal(r.toStage, r.fromStage + 1);
      assert.equal(typeof r.fromReplica, 'number');
      assert.equal(typeof r.toReplica, 'number');
    }
    for (const r of receives) assert.ok(r.rxDecodeTimeMs >= 0 && r.inFlightTimeMs >= 0 && r.replicaId >= 0);

    const polled = new Set(spy.calls.filter((c) => c.name === 'pollEngine').map((c) => `${String(c.args[0])}/${String(c.args[1])}`));
    assert.deepEqual([...polled].sort(), ['0/0', '1/0', '1/1', '2/0']);
    const steps = spy.calls.filter((c) => c.name === 'pollEngine' && c.result !== undefined).map((c) => c.result as EngineCoreOutputs);
    assert.ok(steps.every((s) => typeof s.timestamp === 'number'));
    assert.ok(
      steps.some((s) => s.schedulerStats),
      'scheduler stats ride on polled steps',
    );

    const last = outputs.at(-1) as PipelineOutput;
    assert.equal(outputs.filter((o) => o.finished).length, 1, 'exactly one finished output, the last');
    assert.equal(last.finished, true);
    assert.equal(last.finalOutputType, 'audio');
    assert.equal(last.stageId, 2);
    assert.deepEqual(
      last.stageMetrics?.map((m) => m.stageId),
      [0, 1, 2],
    );
    const audioStage = last.stageMetrics?.find((m) => m.stageId === 2);
    const samples = outputs.reduce((n, o) => n + ((o.multimodalOutput?.audio as Int16Array | undefined)?.length ?? 0), 0);
    assert.equal(audioStage?.audioGeneratedFrames, samples);
    assert.equal(last.multimodalOutput?.sample_rate, 24000);
    assert.ok(
      outputs.some((o) => o.finalOutputType === 'text' && o.text),
      'text deltas come first',
    );
    assert.equal(pipeline.orchestrator.numLiveRequests, 0);
  });

  it('a text-only request stays on the thinker and ends with its finish reason', async () => {
    const outputs = await collect(pipeline.omni.generate({ requestId: 'text-1', prompt: 'hello', maxTokens: 12 }));
    assert.deepEqual(
      spy.calls.filter((c) => c.name === 'submitToStage').map((c) => (c.args[0] as StageRequest).stageId),
      [0],
    );
    assert.equal(count('sendToNextStage'), 0);
    const last = outputs.at(-1) as PipelineOutput;
    assert.ok(last.finished && (last.finishReason === 'stop' || last.finishReason === 'length'));
    assert.deepEqual(
      last.stageMetrics?.map((m) => m.stageId),
      [0],
    );
    assert.equal(last.stageMetrics?.[0].numTokensOut, outputs.length);
  });

  it('a consumer that leaves early (return()) aborts the request: one cleanup, nothing left in the engines', async () => {
    const stream = pipeline.omni.generate({ requestId: 'gone', prompt: 'a long answer please', maxTokens: 30, modalities: ['text', 'audio'] });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.return?.();
    assert.equal(count('cleanupRequest'), 1);
    assert.equal(pipeline.orchestrator.numLiveRequests, 0);
    assert.equal(pipeline.orchestrator.stagePools[0].getBoundReplicaId('gone'), undefined, 'bindings released');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(pipeline.orchestrator.numLiveRequests, 0);
  });

  it('an abort signal wakes a consumer blocked on the next output', async () => {
    const controller = new AbortController();
    const iterator = pipeline.omni.generate({ requestId: 'signal', prompt: 'x y z', maxTokens: 30 }, { signal: controller.signal })[Symbol.asyncIterator]();
    await iterator.next();
    const pending = iterator.next();
    controller.abort();
    await pending;
    assert.equal(count('cleanupRequest'), 1);
    assert.equal(pipeline.orchestrator.numLiveRequests, 0);
  });

  it('refuses bad input before touching the orchestrator', async () => {
    await assert.rejects(collect(pipeline.omni.generate({ requestId: 'bad', prompt: 'hi', maxTokens: 5000 })), /maximum context length/);
    assert.equal(count('addRequest'), 0);
    assert.equal(count('cleanupRequest'), 0);
  });

  it('a shutdown fails live requests, and their cleanup still runs once', async () => {
    const iterator = pipeline.omni.generate({ requestId: 'late', prompt: 'x', maxTokens: 30, modalities: ['text', 'audio'] })[Symbol.asyncIterator]();
    await iterator.next();
    const pending = iterator.next().then(() => iterator.next());
    pipeline.stop();
    await assert.rejects(pending, /shutting down/);
    assert.equal(count('cleanupRequest'), 1);
  });
});
