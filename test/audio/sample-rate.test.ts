import * as assert from 'node:assert/strict';

import { computeAudioRtf } from '../../instrumentation/audio/audio-rtf';
import {
  coercePositiveInteger,
  DEFAULT_AUDIO_SAMPLE_RATE,
  resolveAudioSampleRate,
  resolveAudioSampleRateOrUndefined,
} from '../../instrumentation/audio/sample-rate';

describe('resolveAudioSampleRate', () => {
  it('falls back to 24000, or to the given default', () => {
    assert.equal(DEFAULT_AUDIO_SAMPLE_RATE, 24000);
    assert.equal(resolveAudioSampleRate(undefined), 24000);
    assert.equal(resolveAudioSampleRate(null), 24000);
    assert.equal(resolveAudioSampleRate({}), 24000);
    assert.equal(resolveAudioSampleRate({}, 16000), 16000);
    assert.equal(resolveAudioSampleRateOrUndefined({ audio: [] }), undefined);
  });

  it('tries output_sample_rate, audio_sample_rate, sample_rate, sampling_rate, sr in that order', () => {
    const all = { sr: 5, sampling_rate: 4, sample_rate: 3, audio_sample_rate: 2, output_sample_rate: 1 };
    assert.equal(resolveAudioSampleRate(all), 1);
    const { output_sample_rate: _o, ...withoutOutput } = all;
    assert.equal(resolveAudioSampleRate(withoutOutput), 2);
    const { audio_sample_rate: _a, ...withoutAudio } = withoutOutput;
    assert.equal(resolveAudioSampleRate(withoutAudio), 3);
    const { sample_rate: _s, ...withoutSample } = withoutAudio;
    assert.equal(resolveAudioSampleRate(withoutSample), 4);
    assert.equal(resolveAudioSampleRate({ sr: 5 }), 5);
  });

  it('skips missing, non-positive and unparsable values and goes on down the chain', () => {
    assert.equal(resolveAudioSampleRate({ output_sample_rate: null, audio_sample_rate: undefined, sr: 22050 }), 22050);
    assert.equal(resolveAudioSampleRate({ audio_sample_rate: 0, sample_rate: -16000, sr: 8000 }), 8000);
    assert.equal(resolveAudioSampleRate({ sample_rate: '24000.0', sampling_rate: 16000 }), 16000, 'int("24000.0") fails');
    assert.equal(resolveAudioSampleRate({ sample_rate: Number.NaN, sr: Number.POSITIVE_INFINITY }), 24000);
    assert.equal(resolveAudioSampleRate({ sample_rate: true }), 24000, 'a flag is not a rate');
    assert.equal(resolveAudioSampleRate({ sample_rate: 0.9 }), 24000, 'int(0.9) is 0');
  });

  it('reads numbers, integer strings and bigints as Python int() does', () => {
    assert.equal(resolveAudioSampleRate({ sr: 44100.9 }), 44100);
    assert.equal(resolveAudioSampleRate({ sr: ' 44100 ' }), 44100);
    assert.equal(resolveAudioSampleRate({ sr: '+16000' }), 16000);
    assert.equal(resolveAudioSampleRate({ sr: '4_4100' }), 44100);
    assert.equal(resolveAudioSampleRate({ sr: '44__100' }), 24000);
    assert.equal(resolveAudioSampleRate({ sr: '44100_' }), 24000);
    assert.equal(resolveAudioSampleRate({ sr: '' }), 24000);
    assert.equal(resolveAudioSampleRate({ sr: 48000n }), 48000);
  });

  it('takes the first positive element of a list and the scalar of an item() object', () => {
    assert.equal(resolveAudioSampleRate({ sr: [0, null, 'x', 16000, 8000] }), 16000);
    assert.equal(resolveAudioSampleRate({ sr: [[0], [22050]] }), 22050);
    assert.equal(resolveAudioSampleRate({ sr: new Float32Array([0, 32000]) }), 32000);
    assert.equal(resolveAudioSampleRate({ sr: { item: () => 44100 } }), 44100);
    assert.equal(resolveAudioSampleRate({ sr: [{ item: () => '22050' }] }), 22050);
    assert.equal(resolveAudioSampleRate({ sample_rate: { item: () => 0 }, sr: 8000 }), 8000);
    const throwing = {
      item: () => {
        throw new Error('a multi-element tensor has no single item');
      },
    };
    assert.equal(resolveAudioSampleRate({ sample_rate: throwing, sr: 8000 }), 8000);
    assert.equal(resolveAudioSampleRate({ sr: { value: 16000 } }), 24000, 'an object without item() is not a number');
  });

  it('accepts Maps and objects exposing the keys as properties', () => {
    assert.equal(resolveAudioSampleRate(new Map<string, unknown>([['sampling_rate', 16000]])), 16000);
    class AudioConfig {
      get sample_rate(): number {
        return 44100;
      }
    }
    assert.equal(resolveAudioSampleRate(new AudioConfig()), 44100);
  });

  it('accepts an array of sources: the first source with a usable rate wins', () => {
    assert.equal(resolveAudioSampleRate([null, {}, { sr: 0 }, { audio_sample_rate: 16000 }, { sr: 8000 }]), 16000);
    // Source order beats key order: the first source's late key wins over the second source's early key.
    assert.equal(resolveAudioSampleRate([{ sr: 8000 }, { output_sample_rate: 48000 }]), 8000);
    assert.equal(resolveAudioSampleRate([], 11025), 11025);
  });
});

describe('coercePositiveInteger', () => {
  it('returns undefined for what Python int() would reject or what is not positive', () => {
    assert.equal(coercePositiveInteger(undefined), undefined);
    assert.equal(coercePositiveInteger(-1), undefined);
    assert.equal(coercePositiveInteger('abc'), undefined);
    assert.equal(coercePositiveInteger(12.7), 12);
  });
});

describe('computeAudioRtf', () => {
  it('divides generation time by audio duration, 0 without audio', () => {
    assert.equal(computeAudioRtf(2, 4), 0.5);
    assert.equal(computeAudioRtf(3, 1.5), 2);
    assert.equal(computeAudioRtf(2, 0), 0);
    assert.equal(computeAudioRtf(2, -1), 0);
  });
});
