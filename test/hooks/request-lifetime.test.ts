import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsHandle } from '../../register';
import { monotonicSeconds } from '../../instrumentation/stats/clock';
import { sampleValue } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';
import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';
import { FakeOrchestrator, FakeServing } from './fake-host';
import { collectGarbage } from './collect-garbage';
import { allowPrinted, expectPrinted } from '../support/console-capture';
import { quietHandle } from '../support/quiet-handle';

const M = { model_name: 'm' };
const count = async (metrics: OmniMetricsHandle, reason: string): Promise<number> =>
  sampleValue(await metrics.metricsText(), 'vllm:omni_requests_success_total', { ...M, finished_reason: reason }) ?? 0;
const running = async (metrics: OmniMetricsHandle): Promise<number | undefined> =>
  sampleValue(await metrics.metricsText(), 'vllm:omni_num_requests_running', M);

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // consume
  }
}

describe('per-request state: it ends, it is bounded, nothing is left behind', function () {
  this.timeout(60_000);
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation | undefined;
  beforeEach(async () => {
    metrics = await quietHandle({ stagePools: [1, 2], logStats: true });
  });
  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await metrics.shutdown();
  });
  const instrument = (options: { requestIdleTimeoutMillis?: number; maxTrackedRequests?: number } = {}) => {
    instrumentation = new OmniInstrumentation({
      metrics,
      orchestratorClass: FakeOrchestrator,
      servingClass: FakeServing,
      diagnosticsChannels: false,
      ...options,
    });
    return instrumentation;
  };

  it('a stream nobody iterates or closes is ended as an abort after the idle timeout; an admission never cleaned up is released', async () => {
    const inst = instrument({ requestIdleTimeoutMillis: 60_000 });
    const serving = new FakeServing(new FakeOrchestrator());
    const kept = serving.generate({ requestId: 'never-read' });
    new FakeOrchestrator().addRequest({ requestId: 'never-cleaned' });
    assert.deepEqual(inst.observer.trackedRequests, { admitted: 1, generating: 1 });
    inst.observer.sweep(monotonicSeconds() + 30);
    assert.deepEqual(inst.observer.trackedRequests, { admitted: 1, generating: 1 }, 'not yet idle long enough');
    withWarnings(() => inst.observer.sweep(monotonicSeconds() + 61));
    assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 });
    assert.equal(await count(metrics, 'abort'), 1, 'the stream counts as one abort');
    assert.equal(await running(metrics), 0);
    assert.ok(kept, 'the stream object itself was alive all along');
  });

  it('the sweep runs by itself', async () => {
    const inst = instrument({ requestIdleTimeoutMillis: 40 });
    const serving = new FakeServing(new FakeOrchestrator());
    const kept = serving.generate({ requestId: 'r' });
    assert.equal(inst.observer.trackedRequests.generating, 1);
    await expectPrinted(
      ['omni-otel-metrics: 1 request stream(s) and 0 admission(s) idle for over 0.04 s were ended (streams counted as aborts)'],
      () => new Promise((resolve) => setTimeout(resolve, 300)),
    );
    assert.equal(inst.observer.trackedRequests.generating, 0);
    assert.equal(await count(metrics, 'abort'), 1);
    assert.ok(kept);
  });

  it('a stream dropped without being closed ends when it is garbage-collected', async () => {
    const inst = instrument();
    (() => {
      new FakeServing(new FakeOrchestrator()).generate({ requestId: 'dropped' });
    })();
    assert.equal(inst.observer.trackedRequests.generating, 1);
    for (let attempt = 0; attempt < 50 && inst.observer.trackedRequests.generating > 0; attempt++) {
      await collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(inst.observer.trackedRequests.generating, 0);
    assert.equal(await count(metrics, 'abort'), 1);
  });

  it('a plain iterable dropped while the iterator it handed out is still read is not ended by its collection', async () => {
    class IterableServing {
      generate(request: { requestId: string }): AsyncIterable<OmniRequestOutput> {
        const iterator = new FakeServing(new FakeOrchestrator()).generate(request);
        return { [Symbol.asyncIterator]: () => iterator };
      }
    }
    const inst = new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: IterableServing, diagnosticsChannels: false });
    instrumentation = inst;
    const iterator = (() => new IterableServing().generate({ requestId: 'read-on' })[Symbol.asyncIterator]())();
    for (let attempt = 0; attempt < 20; attempt++) {
      await collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(inst.observer.trackedRequests.generating, 1, 'the iterable is gone, the iterator it handed out is not');
    for (let step = await iterator.next(); !step.done; step = await iterator.next());
    assert.equal(await count(metrics, 'stop'), 1);
    assert.equal(await count(metrics, 'abort'), 0);
  });

  it('concurrent streams that share a request id are separate requests: each is counted', async () => {
    const inst = instrument();
    const serving = new FakeServing(new FakeOrchestrator());
    const streams = ['dup', 'dup', 'dup'].map((requestId) => serving.generate({ requestId }));
    for (const stream of streams) await stream.next();
    assert.equal(inst.observer.trackedRequests.generating, 3);
    await drain(streams[0]!);
    await drain(streams[1]!);
    await streams[2]!.return(undefined);
    assert.equal(await count(metrics, 'stop'), 2);
    assert.equal(await count(metrics, 'abort'), 1);
    assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 });
  });

  it('at the cap the oldest request is ended to make room: no cliff after which nothing is observed', async () => {
    const inst = instrument({ maxTrackedRequests: 3 });
    const serving = new FakeServing(new FakeOrchestrator());
    const streams = withWarnings(() => ['a', 'b', 'c', 'd', 'e'].map((requestId) => serving.generate({ requestId }))).result;
    assert.equal(inst.observer.trackedRequests.generating, 3);
    assert.equal(await count(metrics, 'abort'), 2, 'a and b were ended as aborts');
    for (const stream of streams.slice(2)) await drain(stream);
    assert.equal(await count(metrics, 'stop'), 3, 'every later request is counted');
    assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 });
  });

  it('disable() settles what is in flight: gauges back to 0, nothing counted for it', async () => {
    const inst = instrument();
    const serving = new FakeServing(new FakeOrchestrator());
    const stream = serving.generate({ requestId: 'in-flight' });
    await stream.next();
    assert.equal(await running(metrics), 1);
    inst.disable();
    assert.equal(await running(metrics), 0);
    await drain(stream);
    assert.equal(await count(metrics, 'stop'), 0);
    assert.equal(await count(metrics, 'abort'), 0);
  });

  it('soak: 100k requests, 10 % aborted and 1 % dropped — state empty after the idle timeout, every request counted', async function () {
    this.timeout(120_000);
    const inst = instrument({ requestIdleTimeoutMillis: 100 });
    const serving = new FakeServing(new FakeOrchestrator());
    const total = 100_000;
    let aborted = 0;
    let dropped = 0;
    const kept: unknown[] = [];
    // The sweeps say what they ended, once a minute at most.
    const ended = /^omni-otel-metrics: \d+ request stream\(s\) and 0 admission\(s\) idle for over 0\.1 s were ended \(streams counted as aborts\)/;
    await allowPrinted([ended], async () => {
      for (let i = 0; i < total; i++) {
        const stream = serving.generate({ requestId: `soak-${i}`, chunks: 1 });
        if (i % 100 === 7) {
          dropped++;
          kept.push(stream); // never iterated, never closed; kept alive so only the idle timeout can end it
        } else if (i % 10 === 3) {
          aborted++;
          await stream.next();
          await stream.return(undefined);
        } else {
          await drain(stream);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 400));
    });
    assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 });
    assert.equal(await count(metrics, 'stop'), total - aborted - dropped);
    assert.equal(await count(metrics, 'abort'), aborted + dropped);
    assert.equal(await running(metrics), 0);
    assert.equal(kept.length, 1000);
  });
});
