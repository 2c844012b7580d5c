import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { feedOf } from '../../instrumentation/hooks/handle-feed';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { EngineSeries } from '../../instrumentation/recorders/engine-series';
import type { OmniRecorders } from '../../instrumentation/recorders/recorders';
import { quietHandle } from '../support/quiet-handle';

/**
 * V8's own answer to "is this object a hash table?": `%HasFastProperties`, compiled after the flag
 * that allows natives syntax is set. A dictionary-mode object costs a hash lookup for each property
 * read, and the hooks read these objects on every call they observe.
 */
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;

describe('the objects the record path reads on every call have fast properties', () => {
  it('V8 tells the two apart (the check itself works)', () => {
    assert.equal(hasFastProperties({ a: 1 }), true);
    assert.equal(
      hasFastProperties({
        get a() {
          return 1;
        },
        b: 2,
      }),
      false,
      'an accessor in a literal makes a dictionary',
    );
  });

  it("the hooks' copy of the handle's recorders, the feed, the observer and the engine series", async () => {
    for (const meterProvider of [undefined, 'external' as const]) {
      const handle = await quietHandle({ stagePools: [2, 1], logStats: true, ...(meterProvider === undefined ? {} : { meterProvider }) });
      try {
        const feed = feedOf(handle);
        const observer = feed.observer;
        const recorders = (observer as unknown as { recorders: OmniRecorders }).recorders;
        assert.equal(recorders.statLogger, handle.statLogger, 'the same recorders');
        assert.equal(hasFastProperties(recorders), true, 'the recorders the observer reads');
        assert.equal(hasFastProperties(feed), true, 'the feed');
        assert.equal(hasFastProperties(observer), true, 'the observer');
        const engines = (handle.statLogger as unknown as { engines: Map<number, { series: EngineSeries }> }).engines;
        assert.equal(engines.size, 3);
        for (const entry of engines.values()) {
          assert.equal(hasFastProperties(entry), true, "an engine's entry");
          assert.equal(hasFastProperties(entry.series), true, 'an engine series');
        }
      } finally {
        await handle.shutdown();
      }
    }
  });

  it('a patched prototype has fast properties again after its first call, its own keys and their attributes as they were', async () => {
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
      assert.equal(hasFastProperties(Orchestrator.prototype), true, 'patched, after one call');
      assert.deepEqual(Reflect.ownKeys(Orchestrator.prototype), [...keys, Symbol.for('omni-otel-metrics.host-patches')]);
      assert.deepEqual(attributes(), before);
      instrumentation.disable();
      assert.equal(orchestrator.pollEngine(), POLLED);
      assert.equal(hasFastProperties(Orchestrator.prototype), true, 'restored, after one call');
      assert.deepEqual(Reflect.ownKeys(Orchestrator.prototype), [...keys, Symbol.for('omni-otel-metrics.host-patches')]);
      assert.deepEqual(attributes(), before);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
