import * as assert from 'node:assert/strict';

import { type IntervalHandle, type IntervalTimers, PeriodicLogger } from '../../instrumentation/stats/periodic-logger';

function fakeTimers() {
  const state = {
    callback: undefined as (() => void) | undefined,
    delayMillis: 0,
    unrefCalls: 0,
    cleared: [] as IntervalHandle[],
    handle: undefined as IntervalHandle | undefined,
  };
  const timers: IntervalTimers = {
    setInterval(callback, delayMillis) {
      state.callback = callback;
      state.delayMillis = delayMillis;
      state.handle = {
        unref: () => {
          state.unrefCalls += 1;
        },
      };
      return state.handle;
    },
    clearInterval(handle) {
      state.cleared.push(handle);
    },
  };
  return { timers, state };
}

describe('PeriodicLogger', () => {
  it('starts an unref()ed timer of intervalSeconds and calls log() on every logger per tick', () => {
    const { timers, state } = fakeTimers();
    const calls: string[] = [];
    const periodic = new PeriodicLogger({
      loggers: [{ log: () => calls.push('a') }, { log: () => calls.push('b') }],
      intervalSeconds: 5,
      timers,
    });
    assert.equal(state.delayMillis, 5000);
    assert.equal(state.unrefCalls, 1);
    assert.equal(periodic.running, true);
    state.callback?.();
    state.callback?.();
    assert.deepEqual(calls, ['a', 'b', 'a', 'b']);

    periodic.stop();
    periodic.stop();
    assert.deepEqual(state.cleared, [state.handle], 'cleared once');
    assert.equal(periodic.running, false);
  });

  it('defaults to vLLM’s 10 s interval', () => {
    const { timers, state } = fakeTimers();
    new PeriodicLogger({ timers }).stop();
    assert.equal(state.delayMillis, 10_000);
  });

  it('keeps logging the others when one logger throws, and reports the error', () => {
    const { timers, state } = fakeTimers();
    const errors: unknown[] = [];
    const calls: string[] = [];
    const boom = new Error('sink failed');
    const periodic = new PeriodicLogger({
      loggers: [
        {
          log: () => {
            throw boom;
          },
        },
        { log: () => calls.push('ok') },
      ],
      onError: (error) => errors.push(error),
      timers,
    });
    state.callback?.();
    assert.deepEqual(calls, ['ok']);
    assert.deepEqual(errors, [boom]);
    periodic.stop();
  });

  it('supports add() and delete()', () => {
    const { timers } = fakeTimers();
    const calls: string[] = [];
    const a = { log: () => calls.push('a') };
    const periodic = new PeriodicLogger({ timers });
    periodic.add(a);
    periodic.logAll();
    periodic.delete(a);
    periodic.logAll();
    assert.deepEqual(calls, ['a']);
    periodic.stop();
  });

  it('fires on a real timer and stops', async () => {
    let count = 0;
    const periodic = new PeriodicLogger({ loggers: [{ log: () => (count += 1) }], intervalSeconds: 0.01 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    periodic.stop();
    const seen = count;
    assert.ok(seen >= 1, `expected at least one tick, saw ${seen}`);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(count, seen, 'no tick after stop()');
  });

  it('rejects a non-positive interval', () => {
    assert.throws(() => new PeriodicLogger({ intervalSeconds: 0 }), RangeError);
    assert.throws(() => new PeriodicLogger({ intervalSeconds: Number.POSITIVE_INFINITY }), RangeError);
  });
});
