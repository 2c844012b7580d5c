import assert from 'node:assert/strict';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import fc from 'fast-check';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';
import { sampleValue } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';
import { finishedAudioOutput } from './fake-host';

const M = { model_name: 'm' };

type Request = { readonly requestId: string };
type Options = { readonly inner?: number };

/** The stream one request gets from the engine: one audio chunk, then the finished output (prompt 7, generation 5 + 9 tokens). */
async function* served(request: Request): AsyncGenerator<OmniRequestOutput> {
  yield {
    requestId: request.requestId,
    stageId: 1,
    replicaId: 1,
    finalOutputType: 'audio',
    finished: false,
    multimodalOutput: { audio: new Int16Array(2400), sample_rate: 24000 },
  };
  yield finishedAudioOutput(request.requestId, 1, [5, 9]);
}

/** How a serving class's `generate` calls itself for the request it is given, `depth` times. */
const RECURSIONS = {
  /** No recursion. */
  none: (request: Request): AsyncIterable<OmniRequestOutput> => served(request),
  /** An async generator that delegates to a call of itself with options (the call happens when the stream is first read). */
  delegating: function (this: { generate(r: Request, o?: Options): AsyncIterable<OmniRequestOutput> }, request: Request, options?: Options, depth = 1) {
    const level = options?.inner ?? 0;
    if (level >= depth) return served(request);
    const generateAgain = () => this.generate(request, { inner: level + 1 });
    return (async function* () {
      yield* generateAgain();
    })();
  },
  /** A plain function that returns the stream of its own call, made at once. */
  returning: function (this: { generate(r: Request, o?: Options): AsyncIterable<OmniRequestOutput> }, request: Request, options?: Options, depth = 1) {
    const level = options?.inner ?? 0;
    return level >= depth ? served(request) : this.generate(request, { inner: level + 1 });
  },
  /** A plain function that wraps the stream of its own call, made at once, in a stream of its own. */
  wrapping: function (this: { generate(r: Request, o?: Options): AsyncIterable<OmniRequestOutput> }, request: Request, options?: Options, depth = 1) {
    const level = options?.inner ?? 0;
    if (level >= depth) return served(request);
    const inner = this.generate(request, { inner: level + 1 });
    return (async function* () {
      yield* inner;
    })();
  },
} as const;
type Recursion = keyof typeof RECURSIONS;

/** A fresh serving class (its own prototype, so no patch of another test is on it) of the given style. */
function servingClass(
  recursion: Recursion,
  depth: number,
  bound: boolean,
): new () => { generate(request: Request, options?: Options): AsyncIterable<OmniRequestOutput> } {
  const generate = RECURSIONS[recursion];
  return class Serving {
    constructor() {
      // Autobinding in the constructor: the instance keeps whatever the prototype held at that moment.
      if (bound) this.generate = this.generate.bind(this);
    }
    generate(request: Request, options?: Options): AsyncIterable<OmniRequestOutput> {
      return (generate as (this: unknown, r: Request, o: Options | undefined, d: number) => AsyncIterable<OmniRequestOutput>).call(
        this,
        request,
        options,
        depth,
      );
    }
  };
}

async function drain(stream: AsyncIterable<OmniRequestOutput>): Promise<number> {
  let outputs = 0;
  for await (const _ of stream) outputs++;
  return outputs;
}

/** What the request families say: successes, e2e observations, prompt and generation tokens. */
async function counted(metrics: OmniMetricsHandle): Promise<{ success: number; e2e: number; prompt: number; generation: number }> {
  const text = await metrics.metricsText();
  return {
    success: sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop' }) ?? 0,
    e2e: sampleValue(text, 'vllm:omni_e2e_request_latency_s_count', M) ?? 0,
    prompt: sampleValue(text, 'vllm:omni_prompt_tokens_total', M) ?? 0,
    generation: sampleValue(text, 'vllm:omni_generation_tokens_total', M) ?? 0,
  };
}

/** Runs async `work` with the package's warnings captured rather than printed. */
async function quietly(work: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  diag.setLogger({ error: () => {}, warn: (message: string) => warnings.push(message), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  try {
    await work();
  } finally {
    diag.disable();
  }
  return warnings;
}

const register = (): Promise<OmniMetricsHandle> =>
  registerOmniMetrics({ modelName: 'm', stagePools: [1, 2], logStats: true, prometheus: false, exporters: [], logIntervalSeconds: 0, selfCheck: false });

describe('host styles: recursion, bound methods and accessors', function () {
  this.timeout(120_000);
  let metrics: OmniMetricsHandle;
  let instrumentations: OmniInstrumentation[];
  beforeEach(async () => {
    metrics = await register();
    instrumentations = [];
  });
  afterEach(async () => {
    for (const inst of instrumentations) inst.disable();
    await metrics.shutdown();
  });
  const instrument = (servingClassOption: unknown): OmniInstrumentation => {
    const inst = new OmniInstrumentation({ metrics, servingClass: servingClassOption as { prototype: object }, diagnosticsChannels: false });
    instrumentations.push(inst);
    return inst;
  };

  it('a generate that calls itself with the same request is counted once: success 1, e2e 1, tokens 7 + 14', async () => {
    for (const recursion of ['delegating', 'returning', 'wrapping'] as const) {
      const Serving = servingClass(recursion, 1, false);
      const inst = instrument(Serving);
      const before = await counted(metrics);
      assert.equal(await drain(new Serving().generate({ requestId: `r-${recursion}` })), 2, `${recursion}: the host's outputs reach its consumer`);
      const after = await counted(metrics);
      assert.deepEqual(
        {
          success: after.success - before.success,
          e2e: after.e2e - before.e2e,
          prompt: after.prompt - before.prompt,
          generation: after.generation - before.generation,
        },
        { success: 1, e2e: 1, prompt: 7, generation: 14 },
        recursion,
      );
      assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 }, `${recursion}: nothing left tracked`);
      inst.disable();
    }
  });

  it('a method bound in the constructor keeps being counted after disable() + enable() and under a fresh instrumentation: 5 of 5', async () => {
    const Serving = servingClass('none', 0, true);
    const first = instrument(Serving);
    const instance = new Serving();
    await drain(instance.generate({ requestId: 'a' }));
    first.disable();
    await drain(instance.generate({ requestId: 'not-counted' }));
    first.enable();
    await drain(instance.generate({ requestId: 'b' }));
    await drain(instance.generate({ requestId: 'c' }));
    first.disable();
    instrument(Serving);
    await drain(instance.generate({ requestId: 'd' }));
    await drain(instance.generate({ requestId: 'e' }));
    assert.equal((await counted(metrics)).success, 5);
  });

  it('a disabled patch gives the method back exactly, and enabling again puts the same wrapper back', () => {
    const Serving = servingClass('none', 0, false);
    const original = Serving.prototype.generate;
    const inst = instrument(Serving);
    const wrapper = Serving.prototype.generate;
    assert.notEqual(wrapper, original);
    inst.disable();
    assert.equal(Serving.prototype.generate, original);
    inst.enable();
    assert.equal(Serving.prototype.generate, wrapper);
  });

  it('an accessor where a host method goes is refused at construction, naming the class, the method and what to do', () => {
    class AutoboundServing {
      private bound?: (request: Request) => AsyncIterable<OmniRequestOutput>;
      get generate(): (request: Request) => AsyncIterable<OmniRequestOutput> {
        // As autobind decorators do: bound on first read from an instance (on the prototype, `this` has no `bind` target).
        this.bound ??= ((request: Request) => served(request)).bind(this);
        return this.bound;
      }
      abort(): void {}
    }
    assert.throws(
      () => instrument(AutoboundServing),
      (error: unknown) =>
        error instanceof OmniOptionError &&
        error.option === 'servingClass' &&
        error.message ===
          'omni-otel-metrics: servingClass AutoboundServing defines generate as an accessor (get generate(), as autobind decorators do), which the hooks cannot patch: ' +
            'define generate as a plain method (bind it in the constructor if it must be bound: this.generate = this.generate.bind(this)), ' +
            'or publish its calls on OMNI_CHANNELS and leave servingClass unset',
    );
    assert.equal(typeof Object.getOwnPropertyDescriptor(AutoboundServing.prototype, 'generate')?.get, 'function', 'the accessor is left as it was');
    assert.equal(typeof Object.getOwnPropertyDescriptor(AutoboundServing.prototype, 'abort')?.value, 'function');
    assert.equal(Object.getOwnPropertySymbols(AutoboundServing.prototype).length, 0, 'nothing was patched');
  });

  it('a getter that throws when read on the prototype is never run: refused the same way', () => {
    class Hostile {
      get generate(): () => void {
        throw new TypeError('read on the prototype');
      }
    }
    assert.throws(
      () => instrument(Hostile),
      (error: unknown) => error instanceof OmniOptionError && /Hostile defines generate as an accessor/.test(error.message),
    );
  });

  it('a frozen prototype is refused at construction rather than failing with a TypeError', () => {
    class Frozen {
      generate(request: Request): AsyncIterable<OmniRequestOutput> {
        return served(request);
      }
    }
    Object.freeze(Frozen.prototype);
    assert.throws(
      () => instrument(Frozen),
      (error: unknown) =>
        error instanceof OmniOptionError &&
        error.message ===
          "omni-otel-metrics: servingClass Frozen's prototype refuses changes to generate (frozen, sealed or non-extensible), so the hooks cannot patch it: " +
            'leave the prototype open to changes, or publish its calls on OMNI_CHANNELS and leave servingClass unset',
    );
  });

  it('a class whose host methods are all fields (set on each instance) is refused', () => {
    class Fields {
      generate = (request: Request): AsyncIterable<OmniRequestOutput> => served(request);
    }
    assert.throws(
      () => instrument(Fields),
      (error: unknown) => error instanceof OmniOptionError && /none of the methods the hooks patch/.test(error.message),
    );
  });

  it('a module hook that meets an accessor leaves it alone with one warning, and its require goes on', () => {
    class ModuleServing {
      get generate(): () => void {
        throw new TypeError('read on the prototype');
      }
      abort(): void {}
    }
    const inst = new OmniInstrumentation({
      metrics,
      diagnosticsChannels: false,
      modules: [{ moduleName: 'never-loaded-host', servingExport: 'ModuleServing' }],
    });
    instrumentations.push(inst);
    const patch = (inst.getModuleDefinitions()[0] as { patch?: (exports: unknown) => unknown }).patch;
    const exports = { ModuleServing };
    const { result, warnings } = withWarnings(() => patch?.(exports));
    assert.equal(result, exports);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /ModuleServing defines generate as an accessor .*; its calls are not counted$/);
    assert.equal(typeof Object.getOwnPropertyDescriptor(ModuleServing.prototype, 'abort')?.value, 'function');
    assert.equal((ModuleServing.prototype.abort as { __wrapped?: boolean }).__wrapped, true, 'abort, a plain method, is patched');
  });

  it('property: however a class defines generate, it is counted once per request or refused with an option error at construction, never a raw TypeError', async () => {
    type Style = 'method' | 'bound' | 'getter' | 'throwing getter' | 'setter only' | 'field' | 'frozen' | 'sealed' | 'locked property' | 'inherited';
    const styles: readonly Style[] = [
      'method',
      'bound',
      'getter',
      'throwing getter',
      'setter only',
      'field',
      'frozen',
      'sealed',
      'locked property',
      'inherited',
    ];
    const refusedStyles: ReadonlySet<Style> = new Set(['getter', 'throwing getter', 'setter only', 'field', 'frozen', 'sealed', 'locked property']);
    const classOf = (style: Style): new () => { generate(request: Request): AsyncIterable<OmniRequestOutput> } => {
      class Base {
        generate(request: Request): AsyncIterable<OmniRequestOutput> {
          return served(request);
        }
      }
      const prototype = Base.prototype as unknown as Record<string, unknown>;
      switch (style) {
        case 'bound':
          return servingClass('none', 0, true);
        case 'getter':
          Object.defineProperty(Base.prototype, 'generate', { configurable: true, get: () => (request: Request) => served(request) });
          return Base;
        case 'throwing getter':
          Object.defineProperty(Base.prototype, 'generate', {
            configurable: true,
            get() {
              throw new TypeError('not on the prototype');
            },
          });
          return Base;
        case 'setter only':
          Object.defineProperty(Base.prototype, 'generate', { configurable: true, set: () => undefined });
          return Base;
        case 'field':
          delete prototype.generate;
          return class extends Base {
            constructor() {
              super();
              Object.defineProperty(this, 'generate', { value: (request: Request) => served(request) });
            }
          };
        case 'frozen':
          Object.freeze(Base.prototype);
          return Base;
        case 'sealed':
          Object.seal(Base.prototype);
          return Base;
        case 'locked property':
          Object.defineProperty(Base.prototype, 'generate', { configurable: false, writable: false });
          return Base;
        case 'inherited':
          return class extends Base {};
        default:
          return Base;
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...styles), async (style) => {
        const handle = await register();
        const Serving = classOf(style);
        let inst: OmniInstrumentation | undefined;
        try {
          try {
            inst = new OmniInstrumentation({ metrics: handle, servingClass: Serving, diagnosticsChannels: false });
          } catch (error) {
            assert.ok(error instanceof OmniOptionError, `${style}: ${String(error)}`);
            assert.equal(error.option, 'servingClass');
            assert.ok(refusedStyles.has(style), `${style} is refused`);
            return;
          }
          assert.ok(!refusedStyles.has(style), `${style} is accepted`);
          assert.equal(await drain(new Serving().generate({ requestId: 'r' })), 2);
          assert.equal((await counted(handle)).success, 1);
        } finally {
          inst?.disable();
          await handle.shutdown();
        }
      }),
      { numRuns: 20 },
    );
  });

  it('property: a generate that throws, rejects, fails mid-stream, returns a promise or re-enters hands the host its own outcome, and each request is counted as documented', async () => {
    type Kind = 'stream' | 'throws' | 'rejects' | 'fails mid-stream' | 'promise of stream' | 're-enters';
    const hostError = new Error('host failure');
    class Serving {
      generate(request: Request & { kind: Kind }, options?: Options): unknown {
        switch (request.kind) {
          case 'throws':
            throw hostError;
          case 'rejects':
            return Promise.reject(hostError);
          case 'fails mid-stream':
            return (async function* () {
              const engine = served(request);
              yield (await engine.next()).value as OmniRequestOutput;
              throw hostError;
            })();
          case 'promise of stream':
            return Promise.resolve(served(request));
          case 're-enters':
            return options === undefined ? this.generate(request, { inner: 1 }) : served(request);
          default:
            return served(request);
        }
      }
    }
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Kind>('stream', 'throws', 'rejects', 'fails mid-stream', 'promise of stream', 're-enters'), { minLength: 1, maxLength: 10 }),
        async (kinds) => {
          const handle = await register();
          const inst = new OmniInstrumentation({ metrics: handle, servingClass: Serving, diagnosticsChannels: false });
          try {
            const serving = new Serving();
            await quietly(async () => {
              for (const [i, kind] of kinds.entries()) {
                const request = { requestId: `r${i}`, kind };
                if (kind === 'throws') {
                  assert.throws(
                    () => serving.generate(request),
                    (error: unknown) => error === hostError,
                  );
                  continue;
                }
                const result = serving.generate(request);
                if (kind === 'rejects') await assert.rejects(result as Promise<unknown>, (error: unknown) => error === hostError);
                else if (kind === 'promise of stream') assert.equal(await drain(await (result as Promise<AsyncIterable<OmniRequestOutput>>)), 2);
                else if (kind === 'fails mid-stream')
                  await assert.rejects(drain(result as AsyncIterable<OmniRequestOutput>), (error: unknown) => error === hostError);
                else assert.equal(await drain(result as AsyncIterable<OmniRequestOutput>), 2);
              }
            });
            const text = await handle.metricsText();
            const count = (...of: Kind[]): number => kinds.filter((kind) => of.includes(kind)).length;
            // A generate that throws or rejects made no stream, and a promise of one cannot be watched (one warning): none of them is counted.
            assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop' }) ?? 0, count('stream', 're-enters'));
            assert.equal(sampleValue(text, 'vllm:omni_e2e_request_latency_s_count', M) ?? 0, count('stream', 're-enters'));
            assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'abort' }) ?? 0, count('fails mid-stream'));
            assert.equal(sampleValue(text, 'vllm:omni_requests_failed_total', { ...M, reason: 'stage_error' }) ?? 0, count('fails mid-stream'));
            assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 });
          } finally {
            inst.disable();
            await handle.shutdown();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('property: whatever the recursion, binding and enable / disable / fresh-instrumentation order, each request served while enabled is counted once', async () => {
    const step = fc.oneof(
      fc.constant({ kind: 'toggle' as const }),
      fc.constant({ kind: 'fresh' as const }),
      fc.constant({ kind: 'construct' as const }),
      fc.record({ kind: fc.constant('serve' as const), instance: fc.nat(), requests: fc.integer({ min: 1, max: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Recursion>('none', 'delegating', 'returning', 'wrapping'),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (recursion, depth, bound, steps) => {
          const handle = await register();
          const Serving = servingClass(recursion, depth, bound);
          let inst = new OmniInstrumentation({ metrics: handle, servingClass: Serving, diagnosticsChannels: false });
          // A bound instance holds what the prototype held when it was made: one made while the class is unpatched holds the host's own method, which no instrumentation sees (documented).
          const make = () => ({ serving: new Serving(), heard: !bound || inst.isEnabled() });
          const instances = [make()];
          let expected = 0;
          let next = 0;
          try {
            for (const s of steps) {
              if (s.kind === 'toggle') {
                if (inst.isEnabled()) inst.disable();
                else inst.enable();
              } else if (s.kind === 'fresh') {
                inst.disable();
                inst = new OmniInstrumentation({ metrics: handle, servingClass: Serving, diagnosticsChannels: false });
              } else if (s.kind === 'construct') {
                instances.push(make());
              } else {
                const { serving, heard } = instances[s.instance % instances.length]!;
                for (let i = 0; i < s.requests; i++) {
                  assert.equal(await drain(serving.generate({ requestId: `r${next++}` })), 2);
                  if (inst.isEnabled() && heard) expected++;
                }
              }
            }
            const got = await counted(handle);
            assert.deepEqual(got, { success: expected, e2e: expected, prompt: 7 * expected, generation: 14 * expected });
          } finally {
            inst.disable();
            await handle.shutdown();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
