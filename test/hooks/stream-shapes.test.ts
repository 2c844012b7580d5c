import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsHandle } from '../../register';
import { withWarnings } from '../views/store/store-fixture';
import { expectPrinted } from '../support/console-capture';
import { quietHandle } from '../support/quiet-handle';

const FINAL: OmniRequestOutput = { requestId: 'r', stageId: 0, replicaId: 0, finalOutputType: 'text', finished: true, finishReason: 'stop' };

async function* outputs(): AsyncGenerator<OmniRequestOutput> {
  yield FINAL;
}

/** A hand-written async iterator (a Proxy cannot stand in for a generator object: its methods check their receiver). */
function handWritten(): AsyncIterableIterator<OmniRequestOutput> {
  let done = false;
  return {
    next: async () => (done ? { done: true, value: undefined } : ((done = true), { done: false, value: FINAL })),
    return: async () => ({ done: true, value: undefined }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** A serving class whose `generate` returns whatever the test hands it, so every shape the host may return is tried. */
function servingReturning(make: () => unknown) {
  return class Serving {
    generate(_request: unknown): unknown {
      return make();
    }
  };
}

async function consume(stream: unknown): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const value of stream as AsyncIterable<unknown>) seen.push(value);
  return seen;
}

describe('hooks and the shapes a generate stream may have', () => {
  let metrics: OmniMetricsHandle;
  beforeEach(async () => {
    metrics = await quietHandle({ stagePools: [1], logStats: true });
  });
  afterEach(() => metrics.shutdown());

  async function run(make: () => unknown, request: unknown = { requestId: 'r' }) {
    const Serving = servingReturning(make);
    const plain = new Serving().generate(request);
    const instrumentation = new OmniInstrumentation({ metrics, servingClass: Serving, diagnosticsChannels: false });
    try {
      const { result: hooked, warnings } = withWarnings(() => new Serving().generate(request));
      return { plain, hooked, warnings, tracked: () => instrumentation.observer.trackedRequests.generating };
    } finally {
      setImmediate(() => instrumentation.disable());
    }
  }

  for (const [name, make] of [
    ['a frozen async generator', () => Object.freeze(outputs())],
    ['a frozen async iterable', () => Object.freeze({ [Symbol.asyncIterator]: () => outputs() })],
    ['a Proxy that refuses new properties', () => new Proxy(handWritten(), { defineProperty: () => false })],
    [
      'a Proxy whose defineProperty trap throws',
      () =>
        new Proxy(handWritten(), {
          defineProperty: () => {
            throw new Error('no');
          },
        }),
    ],
  ] as const) {
    it(`${name}: returned untouched, iterated as the host wrote it, not tracked, no throw`, async () => {
      const stream = make();
      const { hooked, tracked } = await run(() => stream);
      assert.equal(hooked, stream, 'the very same object');
      assert.deepEqual(await consume(hooked), [FINAL]);
      assert.equal(tracked(), 0);
      const text = await metrics.metricsText();
      assert.ok(!text.includes('vllm:omni_requests_success_total{'), 'nothing counted for a stream the hooks cannot see');
    });
  }

  it('an iterator that refuses one of the hooks keeps its own methods exactly as it had them', async () => {
    const own = Object.assign(handWritten(), { throw: async () => ({ done: true as const, value: undefined }) });
    const before = Object.getOwnPropertyDescriptors(own);
    const stream = new Proxy(own, { defineProperty: (target, name, descriptor) => name !== 'throw' && Reflect.defineProperty(target, name, descriptor) });
    const { hooked, tracked } = await run(() => stream);
    assert.equal(hooked, stream, 'the very same object');
    assert.deepEqual(Object.getOwnPropertyDescriptors(own), before, 'next and return were shadowed, then put back as they were');
    assert.equal(tracked(), 0);
    assert.deepEqual(await consume(hooked), [FINAL]);
  });

  it('an iterable whose iterator refuses the hooks: tracking ends when it is handed out, uncounted', async () => {
    const iterable = { [Symbol.asyncIterator]: () => Object.freeze(outputs()) };
    const { hooked, tracked } = await run(() => iterable);
    assert.equal(hooked, iterable);
    assert.equal(tracked(), 1, 'tracked until its iterator is asked for');
    assert.deepEqual(await consume(hooked), [FINAL]);
    assert.equal(tracked(), 0);
  });

  it('a generate that returns no iterable (undefined, a number, a promise) is returned as is and not tracked', async () => {
    for (const value of [undefined, 42, Promise.resolve('x')]) {
      const { hooked, tracked } = await run(() => value);
      assert.equal(hooked, value);
      assert.equal(tracked(), 0);
    }
  });

  it('a request whose requestId getter throws: the host gets its stream, the hooks stay out', async () => {
    const request = {
      get requestId(): string {
        throw new Error('getter');
      },
    };
    const stream = outputs();
    const { hooked, tracked } = await run(() => stream, request);
    assert.equal(hooked, stream);
    assert.equal(tracked(), 0);
    assert.deepEqual(await consume(hooked), [FINAL]);
  });

  it('an ordinary async generator is still observed and counted', async () => {
    const { hooked } = await run(() => outputs());
    assert.deepEqual(await consume(hooked), [FINAL]);
    assert.ok((await metrics.metricsText()).includes('vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 1.0'));
  });
});

describe('hooks and unhandled rejections: the host sees the ones it would see without them', function () {
  this.timeout(60_000);
  const FIXTURE = join(__dirname, 'fixtures', 'unhandled-rejections.ts');
  const run = (mode: string) => spawnSync(process.execPath, ['--require', 'tsx/cjs', FIXTURE, mode], { encoding: 'utf8', timeout: 30_000 });

  it('a rejection never awaited is unhandled, one handled late is reported as handled, awaited ones are silent', () => {
    const plain = run('plain');
    const hooked = run('hooked');
    assert.equal(plain.status, 0, plain.stderr);
    assert.equal(hooked.status, 0, hooked.stderr);
    const expected = {
      'poll rejected, never awaited': { unhandled: ['poll failed'], handledLate: 0 },
      'poll rejected, awaited': { unhandled: [], handledLate: 0 },
      'poll rejected, handled late': { unhandled: ['poll failed'], handledLate: 1 },
      'poll fulfilled': { unhandled: [], handledLate: 0 },
      'stream next rejected, never awaited': { unhandled: ['stream failed'], handledLate: 0 },
      'stream consumed, error caught': { unhandled: [], handledLate: 0 },
    };
    assert.deepEqual(JSON.parse(plain.stdout), expected, 'the host on its own');
    assert.deepEqual(JSON.parse(hooked.stdout), expected, 'the same host with the hooks');
  });

  it("with no listener, a rejection never awaited ends the process as Node's default does", () => {
    for (const mode of ['crash-plain', 'crash-hooked']) {
      const result = run(mode);
      assert.equal(result.status, 1, `${mode}: exit status`);
      assert.equal(result.stdout, '', `${mode}: did not carry on`);
      assert.match(result.stderr, /Error: poll failed/, mode);
    }
  });
});

describe('hooks and the shapes an orchestrator method may return', () => {
  let metrics: OmniMetricsHandle;
  beforeEach(async () => {
    metrics = await quietHandle({ stagePools: [1], logStats: true });
  });
  afterEach(() => metrics.shutdown());

  function hookedPollReturning(result: unknown): unknown {
    class Orchestrator {
      pollEngine(): unknown {
        return result;
      }
    }
    const instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: Orchestrator, diagnosticsChannels: false });
    try {
      return new Orchestrator().pollEngine();
    } finally {
      instrumentation.disable();
    }
  }

  it('a plain promise comes back as one that settles with the very same value or reason', async () => {
    const value = { timestamp: 1, outputs: [] };
    const fulfilled = hookedPollReturning(Promise.resolve(value));
    assert.ok(fulfilled instanceof Promise);
    assert.equal(await fulfilled, value);
    const reason = new Error('poll failed');
    const rejected = hookedPollReturning(Promise.reject(reason)) as Promise<unknown>;
    await assert.rejects(rejected, (error: unknown) => error === reason);
  });

  it('a promise subclass, a promise carrying its own properties and a custom thenable come back as the very same object', async () => {
    class HostPromise<T> extends Promise<T> {}
    const subclass = HostPromise.resolve({ timestamp: 1, outputs: [] });
    const cancellable = Object.assign(Promise.resolve({ timestamp: 1, outputs: [] }), { cancel: () => undefined });
    const thenable = { then: (resolve: (value: unknown) => void) => resolve({ timestamp: 1, outputs: [] }) };
    const throwingThen = {
      then: () => {
        throw new Error('then refused');
      },
    };
    // A poll that returns no EngineCoreOutputs (42) cannot be recorded: said once, with the error.
    await expectPrinted([/^omni-otel-metrics: telemetry failed in pollEngine; the host call went on unaffected \(reported once\) TypeError: /], () => {
      for (const result of [subclass, cancellable, thenable, throwingThen, 42, undefined]) {
        assert.equal(hookedPollReturning(result), result);
      }
    });
  });
});
