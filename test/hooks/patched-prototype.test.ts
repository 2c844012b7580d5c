import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { quietHandle } from '../support/quiet-handle';

describe('a patched host prototype', () => {
  it('keeps its own keys and their attributes, patched and restored', async () => {
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
    const handle = await quietHandle({ stagePools: [1] });
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
});
