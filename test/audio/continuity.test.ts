import * as assert from 'node:assert/strict';

import { computeContinuityStats } from '../../instrumentation/audio/continuity';

const MONO_24K = { sampleRate: 24000 }; // 48 000 B/s in s16le

describe('computeContinuityStats (player simulation)', () => {
  it('worked example 1: three chunks, one underrun of 0.3 s with the exact IEEE result', () => {
    const stats = computeContinuityStats([0.2, 0.35, 0.8], [9600, 4800, 19200], MONO_24K);
    // (0.8 - 0.2) is 0.6000000000000001, so the deficit is not exactly 0.3; CPython prints the same value.
    assert.equal(stats.maxUnderrunS, 0.3000000000000001);
    assert.equal(stats.maxUnderrunS, ((0.8 - 0.2) * 48000 - 14400) / 48000);
    assert.notEqual(stats.maxUnderrunS, 0.3);
    assert.equal(stats.underrunEventCount, 1);
    assert.equal(stats.isContinuous, false);

    const lenient = computeContinuityStats([0.2, 0.35, 0.8], [9600, 4800, 19200], { ...MONO_24K, thresholdS: 0.5 });
    assert.equal(lenient.isContinuous, true);
    assert.equal(lenient.maxUnderrunS, stats.maxUnderrunS);
  });

  it('worked example 2: the clock never pauses, so one stall counts at every later late arrival', () => {
    assert.deepEqual(computeContinuityStats([0, 0.5, 0.6], [4800, 4800, 4800], MONO_24K), {
      maxUnderrunS: 0.4,
      underrunEventCount: 2,
      isContinuous: false,
    });
  });

  it('boundary example: an underrun equal to the threshold is continuous (inclusive)', () => {
    assert.deepEqual(computeContinuityStats([0, 0.2], [4800, 4800], MONO_24K), {
      maxUnderrunS: 0.1,
      underrunEventCount: 1,
      isContinuous: true,
    });
  });

  it('stereo example: channels multiply the byte rate', () => {
    assert.deepEqual(computeContinuityStats([0, 1], [200, 200], { sampleRate: 100, channels: 2 }), {
      maxUnderrunS: 0.5,
      underrunEventCount: 1,
      isContinuous: false,
    });
  });

  it('reports the max over gaps, not the sum, and only relative arrivals matter', () => {
    // 0.1 s of audio per chunk: the deficit is 0.15 s at the second arrival and 0.4 s (cumulative) at the third;
    // the max is reported, not the 0.55 s sum.
    const stats = computeContinuityStats([5, 5.25, 5.6], [4800, 4800, 4800], MONO_24K);
    assert.equal(stats.underrunEventCount, 2);
    assert.equal(stats.maxUnderrunS, ((5.6 - 5) * 48000 - 9600) / 48000);
    assert.ok(Math.abs(stats.maxUnderrunS - 0.4) < 1e-9);
  });

  it('does not count a chunk arriving exactly when the buffer runs dry (strict deficit > 0)', () => {
    // 0.5 s of audio arrives at 0; the next chunk arrives at 0.5 s: 0.5 * 48000 - 24000 is exactly 0.
    assert.deepEqual(computeContinuityStats([0, 0.5], [24000, 24000], MONO_24K), {
      maxUnderrunS: 0,
      underrunEventCount: 0,
      isContinuous: true,
    });
  });

  it('uses odd byte counts as they are', () => {
    const stats = computeContinuityStats([0, 0.3, 0.31], [4801, 4799, 1], MONO_24K);
    assert.equal(stats.maxUnderrunS, 0.19997916666666668);
    assert.equal(stats.underrunEventCount, 2);
  });

  it('returns (0, 0, true) when there is nothing to judge', () => {
    const nothing = { maxUnderrunS: 0, underrunEventCount: 0, isContinuous: true };
    assert.deepEqual(computeContinuityStats([], [], MONO_24K), nothing);
    assert.deepEqual(computeContinuityStats([0, 1], [4800], MONO_24K), nothing, 'length mismatch');
    assert.deepEqual(computeContinuityStats([0, 10], [1, 1], { sampleRate: 0 }), nothing, 'no byte rate');
    assert.deepEqual(computeContinuityStats([7], [4800], MONO_24K), nothing, 'chunk 0 is never checked');
  });
});
