import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { quietHandle } from '../support/quiet-handle';

describe('a patched host prototype', () => {
  // The patch table's key is process-wide so that two instrumentations, or two copies of the package, find the one patch a method has.
  it('keeps its own keys and their attributes, patched and restored, beside the one patch table', async () => {
    const POLLED = { timestamp: 1, outputs: [] as [] };
    class Orchestrator {
      readonly stagePools = [];
      addRequest(): void {}
      pollEngine(): { timestamp: number; outputs: [] } {
        return POLLED;
      }
      submitToStage(): void {}
    }
    const keys = Reflect.ownKeys(Orchestrator.prototype);
    const attributes = (): unknown[] =>
      keys.map((key) => {
        const { value, ...rest } = Object.getOwnPropertyDescriptor(Orchestrator.prototype, key) as PropertyDescriptor;
        return { key, rest, isFunction: typeof value === 'function' };
      });
    const before = attributes();
    const handle = await quietHandle({ stagePools: [1], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
    try {
      const orchestrator = new Orchestrator();
      assert.equal(orchestrator.pollEngine(), POLLED);
      assert.deepEqual(Reflect.ownKeys(Orchestrator.prototype), [...keys, Symbol.for('omni-otel-metrics.host-patches')]);
      assert.deepEqual(attributes(), before);
      instrumentation.disable();
      assert.equal(orchestrator.pollEngine(), POLLED);
      assert.deepEqual(Reflect.ownKeys(Orchestrator.prototype), [...keys, Symbol.for('omni-otel-metrics.host-patches')]);
      assert.deepEqual(attributes(), before);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });

  it('defines on the prototype only the methods it patches and its patch table, and deletes nothing', async () => {
    const POLLED = { timestamp: 1, outputs: [] as [] };
    // A prototype that reports every key defined or deleted on it, as a proxy-wrapped host class would see them.
    const defined: PropertyKey[] = [];
    const deleted: PropertyKey[] = [];
    const target = {
      stagePools: [],
      addRequest(): void {},
      pollEngine(): { timestamp: number; outputs: [] } {
        return POLLED;
      },
    };
    function Orchestrator(): void {}
    Orchestrator.prototype = new Proxy(target, {
      defineProperty(object, key, descriptor) {
        defined.push(key);
        return Reflect.defineProperty(object, key, descriptor);
      },
      deleteProperty(object, key) {
        deleted.push(key);
        return Reflect.deleteProperty(object, key);
      },
    });
    const handle = await quietHandle({ stagePools: [1], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator as never, diagnosticsChannels: false });
    try {
      const orchestrator = new (Orchestrator as unknown as new () => typeof target)();
      assert.equal(orchestrator.pollEngine(), POLLED);
      instrumentation.disable();
      assert.equal(orchestrator.pollEngine(), POLLED);
      assert.deepEqual(
        [...new Set(defined)].sort((a, b) => String(a).localeCompare(String(b))),
        ['addRequest', 'pollEngine', Symbol.for('omni-otel-metrics.host-patches')].sort((a, b) => String(a).localeCompare(String(b))),
      );
      assert.deepEqual(deleted, []);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
