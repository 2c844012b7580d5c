import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ORCHESTRATOR_METHODS, SERVING_METHODS } from '../../instrumentation/hooks/host-wrappers';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { withWarnings } from '../views/store/store-fixture';
import { quietHandle } from '../support/quiet-handle';

/** What a host method does with the call: return a value, or throw one. */
type Outcome = { readonly kind: 'return' | 'throw'; readonly value: unknown };
let outcome: Outcome = { kind: 'return', value: undefined };
let calls: unknown[][] = [];

function hostMethod(this: unknown, ...args: unknown[]): unknown {
  calls.push(args);
  if (outcome.kind === 'throw') throw outcome.value;
  return outcome.value;
}

/** Every method the hooks patch, each doing what `outcome` says. */
const methodsOf = (names: readonly string[]): PropertyDescriptorMap =>
  Object.fromEntries(names.map((name) => [name, { value: hostMethod, writable: true, configurable: true, enumerable: false }]));
class Orchestrator {}
class Serving {}
Object.defineProperties(Orchestrator.prototype, methodsOf(ORCHESTRATOR_METHODS));
Object.defineProperties(Serving.prototype, methodsOf(SERVING_METHODS));

const METHODS = [...ORCHESTRATOR_METHODS.map((name) => [Orchestrator, name] as const), ...SERVING_METHODS.map((name) => [Serving, name] as const)];

describe('every patched host method, one shape', () => {
  it('property: whatever the host passes, returns or throws, the wrapped method hands on every argument and gives back the very value or error, listened to or idle', async () => {
    const handle = await quietHandle({ stagePools: [1, 1], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, servingClass: Serving, diagnosticsChannels: false });
    try {
      withWarnings(() =>
        fc.assert(
          fc.property(
            fc.constantFrom(...METHODS),
            fc.array(fc.anything(), { maxLength: 3 }),
            fc.constantFrom<Outcome['kind']>('return', 'throw'),
            fc.anything(),
            fc.boolean(),
            ([hostClass, name], args, kind, value, listening) => {
              if (listening) instrumentation.enable();
              else instrumentation.disable();
              outcome = { kind, value };
              calls = [];
              const method = (hostClass.prototype as Record<string, (...a: unknown[]) => unknown>)[name] as (...a: unknown[]) => unknown;
              // Listened to, the method is the wrapper; idle, the host's own method is back.
              assert.equal(method !== hostMethod, listening);
              const target: unknown = new hostClass();
              if (kind === 'throw') {
                assert.throws(
                  () => method.apply(target, args),
                  (error) => Object.is(error, value),
                );
              } else {
                assert.ok(Object.is(method.apply(target, args), value));
              }
              assert.deepEqual(calls, [args]);
            },
          ),
          { numRuns: 300 },
        ),
      );
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
