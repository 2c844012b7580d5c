import * as assert from 'node:assert/strict';

import { StatsThrottle } from '../../instrumentation/stats/stats-throttle';
import { AUDIO_SAMPLE_RATE, Code2WavEngine, SAMPLES_PER_CODEC_FRAME, type Code2WavEngineOptions } from '../../examples/pipeline/code2wav-engine';
import type { StageEngineOutput } from '../../examples/pipeline/stage-engine';

function vocoder(overrides: Partial<Code2WavEngineOptions> = {}): Code2WavEngine {
  return new Code2WavEngine({
    stageId: 2,
    replicaId: 0,
    seed: 1,
    timing: { rtf: 0.01, batchSlowdown: 0, rtfJitter: 0, stallProbability: 0, stallFactor: 1, stepOverheadMs: 0 },
    framesPerStep: 4,
    maxBatch: 4,
    malformedProbability: 0,
    statsThrottle: new StatsThrottle({ intervalSeconds: 0 }),
    ...overrides,
  });
}

function runAll(e: Code2WavEngine): StageEngineOutput[] {
  const outputs: StageEngineOutput[] = [];
  while (e.runStepSync()) for (let s = e.poll(); s !== undefined; s = e.poll()) outputs.push(...s.outputs);
  return outputs;
}

describe('examples: Code2WavEngine', () => {
  it('vocodes codec chunks into real PCM16 at 24 kHz and finishes only after the final chunk', () => {
    const e = vocoder();
    e.submit({ requestId: 'r', tokenIds: [1, 2, 3, 4, 5, 6], maxTokens: 0, final: false });
    const partial = runAll(e);
    assert.deepEqual(
      partial.map((o) => o.numNewTokens),
      [4, 2],
    );
    assert.ok(
      partial.every((o) => !o.finishReason),
      'no finish before the final chunk',
    );
    e.submit({ requestId: 'r', tokenIds: [7], maxTokens: 0, final: true });
    const rest = runAll(e);
    assert.equal(rest.at(-1)?.finishReason, 'stop');
    const audio = [...partial, ...rest].map((o) => o.audio as Int16Array);
    const samples = audio.reduce((n, chunk) => n + chunk.length, 0);
    assert.equal(samples, 7 * SAMPLES_PER_CODEC_FRAME, '80 ms per codec frame');
    assert.equal(SAMPLES_PER_CODEC_FRAME / AUDIO_SAMPLE_RATE, 0.08);
    const peak = Math.max(...audio.flatMap((chunk) => Array.from(chunk, Math.abs)));
    assert.ok(peak > 500 && peak < 4000, `a quiet but audible signal, peak ${peak}`);
    assert.deepEqual(
      partial[0].events?.map((ev) => ev.type),
      ['QUEUED', 'SCHEDULED'],
    );
  });

  it('silent loss: a malformed request still finishes with stop, with empty audio', () => {
    const e = vocoder({ malformedProbability: 1 });
    e.submit({ requestId: 'bad', tokenIds: [1, 2, 3], maxTokens: 0, final: true });
    const outputs = runAll(e);
    assert.equal(outputs.at(-1)?.finishReason, 'stop');
    assert.ok(outputs.every((o) => o.audio?.length === 0));
  });

  it('takes audio duration x RTF per step: a replica with RTF > 1 is slower than playback', async () => {
    const e = vocoder({ timing: { rtf: 1.5, batchSlowdown: 0, rtfJitter: 0, stallProbability: 0, stallFactor: 1, stepOverheadMs: 0 }, framesPerStep: 1 });
    e.start();
    const started = performance.now();
    e.submit({ requestId: 'slow', tokenIds: [9], maxTokens: 0, final: true });
    while (e.bufferedSteps === 0) await new Promise((r) => setTimeout(r, 5));
    const elapsedMs = performance.now() - started;
    e.stop();
    assert.ok(elapsedMs >= 115, `80 ms of audio at RTF 1.5 took ${elapsedMs.toFixed(0)} ms`);
  });
});
