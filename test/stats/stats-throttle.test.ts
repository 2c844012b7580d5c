import * as assert from 'node:assert/strict';

import { StatsThrottle } from '../../instrumentation/stats/stats-throttle';
import { OmniOptionError } from '../../views/common/option-checks';

function fakeClock(start: number) {
  let now = start;
  return {
    clock: () => now,
    set: (seconds: number) => {
      now = seconds;
    },
  };
}

describe('StatsThrottle (make_stats 1 Hz gate)', () => {
  it('passes the first call, rejects 0.999 s later and passes exactly 1.0 s later', () => {
    const time = fakeClock(1000);
    const throttle = new StatsThrottle({ clock: time.clock });
    assert.equal(throttle.intervalSeconds, 1);
    assert.equal(throttle.shouldEmit('stage=0,replica=0'), true);
    time.set(1000.999);
    assert.equal(throttle.shouldEmit('stage=0,replica=0'), false);
    time.set(1001);
    assert.equal(throttle.shouldEmit('stage=0,replica=0'), true, 'strict <: exactly one interval later passes');
    time.set(1001.5);
    assert.equal(throttle.shouldEmit('stage=0,replica=0'), false, 'the pass at 1001 restarted the interval');
  });

  it('does not restart the interval on a rejected call', () => {
    const time = fakeClock(10);
    const throttle = new StatsThrottle({ clock: time.clock });
    throttle.shouldEmit('k');
    time.set(10.5);
    assert.equal(throttle.shouldEmit('k'), false);
    time.set(11);
    assert.equal(throttle.shouldEmit('k'), true);
  });

  it('keeps every key independent: no global throttle', () => {
    const time = fakeClock(1000);
    const throttle = new StatsThrottle({ clock: time.clock });
    assert.equal(throttle.shouldEmit('0/0'), true);
    time.set(1000.5);
    assert.equal(throttle.shouldEmit('0/1'), true, 'another replica is not silenced by 0/0');
    assert.equal(throttle.shouldEmit('0/0'), false);
    time.set(1001);
    assert.equal(throttle.shouldEmit('0/0'), true);
    assert.equal(throttle.shouldEmit('0/1'), false, '0/1 last emitted at 1000.5');
  });

  it('passes the first call even on a clock that starts at 0', () => {
    const time = fakeClock(0);
    const throttle = new StatsThrottle({ clock: time.clock });
    assert.equal(throttle.shouldEmit('k'), true);
    assert.equal(throttle.shouldEmit('k'), false);
  });

  it('honours a custom interval and forget()', () => {
    const time = fakeClock(5);
    const throttle = new StatsThrottle({ intervalSeconds: 0.25, clock: time.clock });
    assert.equal(throttle.shouldEmit('k'), true);
    time.set(5.125);
    assert.equal(throttle.shouldEmit('k'), false);
    throttle.forget('k');
    assert.equal(throttle.shouldEmit('k'), true);
    time.set(5.375);
    assert.equal(throttle.shouldEmit('k'), true);
  });

  it('uses the monotonic clock by default and rejects invalid intervals', () => {
    const throttle = new StatsThrottle();
    assert.equal(throttle.shouldEmit('k'), true);
    assert.equal(throttle.shouldEmit('k'), false);
    assert.throws(() => new StatsThrottle({ intervalSeconds: -1 }), OmniOptionError);
    assert.throws(() => new StatsThrottle({ intervalSeconds: Number.NaN }), OmniOptionError);
  });
});
