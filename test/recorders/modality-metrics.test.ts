import assert from 'node:assert/strict';
import type { OmniMetricsHandle } from '../../register';
import { RTF_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { histogramOf, seriesOf } from '../support/exposition';
import { assertHistogram, assertNoSeries, assertSample, bucketCount, register, stageLabels } from './harness';

const TTFP = 'vllm:omni_audio_ttfp_s';
const DURATION = 'vllm:omni_audio_duration_s';
const RTF = 'vllm:omni_audio_rtf';
const FRAMES = 'vllm:omni_audio_frames_total';
const UNDERRUN = 'vllm:omni_audio_underrun_s';
const CONTINUITY = 'vllm:omni_audio_continuity_ok_total';
const SKIPPED = 'vllm:omni_audio_skipped_requests_total';
const AUDIO_FAMILIES = [TTFP, DURATION, RTF, FRAMES, UNDERRUN, CONTINUITY, SKIPPED];

/** s16le mono at 24 kHz: 48 000 bytes per second of audio. */
const BYTES_PER_S_24K = 24000 * 2 * 1;

describe('recorders: OmniModalityMetrics (audio families)', () => {
  // Every test writes to its own (stage, replica) so series never mix; each asserts its own.
  let handle: OmniMetricsHandle;
  beforeEach(async () => {
    handle = await register({ stagePools: [1, 1, 1] });
  });
  afterEach(() => handle.shutdown());

  describe('direct methods and their guards', () => {
    it('observes TTFP, duration and RTF as given', async () => {
      handle.audio.observeAudioTtfp(2, 0, 0.3);
      handle.audio.observeAudioTtfp(2, 0, 12);
      handle.audio.observeAudioDuration('2', '0', 4.5);
      handle.audio.observeAudioRtf(2, 0, 0.9);
      handle.audio.observeAudioRtf(2, 0, 1.2);
      const text = await handle.metricsText();
      const labels = stageLabels(2, 0);
      const ttfp = assertHistogram(text, TTFP, labels, SECONDS_BUCKETS, [0.3, 12]);
      assert.equal(bucketCount(ttfp, '0.25'), 0);
      assert.equal(bucketCount(ttfp, '0.5'), 1);
      assert.equal(bucketCount(ttfp, '10.0'), 1);
      assert.equal(bucketCount(ttfp, '20.0'), 2);
      assertHistogram(text, DURATION, labels, SECONDS_BUCKETS, [4.5]);
      const rtf = assertHistogram(text, RTF, labels, RTF_BUCKETS, [0.9, 1.2]);
      assert.equal(bucketCount(rtf, '0.9'), 1, 'le is inclusive');
      assert.equal(bucketCount(rtf, '1.0'), 1);
      assert.equal(bucketCount(rtf, '1.25'), 2);
    });

    it('incAudioFrames: zero or negative counts create no series; positive counts add up', async () => {
      handle.audio.incAudioFrames(1, 0, 0);
      handle.audio.incAudioFrames(1, 0, -5);
      let text = await handle.metricsText();
      assert.deepEqual(seriesOf(text, FRAMES), []);

      handle.audio.incAudioFrames(1, 0, 480);
      handle.audio.incAudioFrames(1, 0, -480);
      handle.audio.incAudioFrames(1, 0, 240);
      text = await handle.metricsText();
      assert.deepEqual(seriesOf(text, FRAMES), [stageLabels(1, 0)]);
      assertSample(text, FRAMES, stageLabels(1, 0), 720);
    });

    it('observeAudioUnderrun clamps negative values to 0', async () => {
      handle.audio.observeAudioUnderrun(1, 0, -0.2);
      handle.audio.observeAudioUnderrun(1, 0, 0.02);
      const text = await handle.metricsText();
      const underrun = assertHistogram(text, UNDERRUN, stageLabels(1, 0), SECONDS_FAST_BUCKETS, [0, 0.02]);
      assert.equal(bucketCount(underrun, '0.001'), 1, 'the clamped 0 lands in the first bucket');
      assert.equal(underrun.sum, 0.02);
    });

    it('incAudioContinuityOk truncates threshold_ms to an integer', async () => {
      handle.audio.incAudioContinuityOk(1, 0, 100);
      handle.audio.incAudioContinuityOk(1, 0, 100.9);
      handle.audio.incAudioContinuityOk(1, 0, 99.99);
      const text = await handle.metricsText();
      assertSample(text, CONTINUITY, stageLabels(1, 0, { threshold_ms: '100' }), 2);
      assertSample(text, CONTINUITY, stageLabels(1, 0, { threshold_ms: '99' }), 1);
      assert.equal(seriesOf(text, CONTINUITY).length, 2);
    });

    it('incAudioSkipped records an empty or missing reason as unknown', async () => {
      handle.audio.incAudioSkipped(1, 0, '');
      handle.audio.incAudioSkipped(1, 0, null);
      handle.audio.incAudioSkipped(1, 0, undefined);
      handle.audio.incAudioSkipped(1, 0, 'malformed_codec');
      const text = await handle.metricsText();
      assertSample(text, SKIPPED, stageLabels(1, 0, { reason: 'unknown' }), 3);
      assertSample(text, SKIPPED, stageLabels(1, 0, { reason: 'malformed_codec' }), 1);
      assert.equal(seriesOf(text, SKIPPED).length, 2);
    });
  });

  describe('observeModalityAtFinalize', () => {
    it('audio with generation time and frames: frames, duration = frames / sample_rate, RTF = gen / duration', async () => {
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 2,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 1500, audioGeneratedFrames: 48000 },
        multimodalOutput: { sample_rate: 24000 },
      });
      const text = await handle.metricsText();
      const labels = stageLabels(2, 0);
      assertSample(text, FRAMES, labels, 48000);
      const duration = 48000 / 24000; // 2.0 s
      const rtf = 1500 / 1000 / duration; // 0.75
      const durationHist = assertHistogram(text, DURATION, labels, SECONDS_BUCKETS, [duration]);
      assert.equal(bucketCount(durationHist, '1.0'), 0);
      assert.equal(bucketCount(durationHist, '2.0'), 1);
      const rtfHist = assertHistogram(text, RTF, labels, RTF_BUCKETS, [rtf]);
      assert.equal(rtfHist.sum, 0.75);
      assert.equal(bucketCount(rtfHist, '0.5'), 0);
      assert.equal(bucketCount(rtfHist, '0.75'), 1);
      assert.deepEqual(seriesOf(text, SKIPPED), []);
      // Never TTFP, underrun or continuity at finalize.
      assertNoSeries(text, TTFP, UNDERRUN, CONTINUITY);
    });

    it('counts frames from Int16Array chunks when audioGeneratedFrames is absent', async () => {
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 2,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 250 },
        multimodalOutput: { audio: [new Int16Array(12000), new Int16Array(4000)], sampling_rate: 16000 },
      });
      const text = await handle.metricsText();
      const labels = stageLabels(2, 0);
      const frames = 12000 + 4000;
      assertSample(text, FRAMES, labels, frames);
      const duration = frames / 16000; // 1.0 s
      assertHistogram(text, DURATION, labels, SECONDS_BUCKETS, [duration]);
      assertHistogram(text, RTF, labels, RTF_BUCKETS, [0.25 / duration]);
    });

    it('counts frames from chunks when audioGeneratedFrames is 0, and from a single chunk / shaped chunks', async () => {
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 0,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 100, audioGeneratedFrames: 0 },
        multimodalOutput: { audio: new Int16Array(2400) }, // one chunk, default 24 kHz
      });
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 1,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 100, audioGeneratedFrames: null },
        // [channels, samples] tensors count the last axis.
        multimodalOutput: { audio: [{ shape: [2, 960] }, { shape: [1, 1440] }] },
      });
      const text = await handle.metricsText();
      assertSample(text, FRAMES, stageLabels(0, 0), 2400);
      assertHistogram(text, DURATION, stageLabels(0, 0), SECONDS_BUCKETS, [2400 / 24000]);
      assertHistogram(text, RTF, stageLabels(0, 0), RTF_BUCKETS, [0.1 / (2400 / 24000)]);
      assertSample(text, FRAMES, stageLabels(1, 0), 960 + 1440);
      assertHistogram(text, DURATION, stageLabels(1, 0), SECONDS_BUCKETS, [(960 + 1440) / 24000]);
    });

    it('resolves the sample rate along the key chain, skipping unusable values, else 24000', async () => {
      const finalize = (replicaId: number, multimodalOutput: unknown): number | undefined =>
        handle.audio.observeModalityAtFinalize({
          outputType: 'audio',
          stageId: 0,
          replicaId,
          stageMetrics: { stageGenTimeMs: 0, audioGeneratedFrames: 96000 },
          multimodalOutput,
        });
      finalize(0, { output_sample_rate: 48000, audio_sample_rate: 16000, sample_rate: 8000 });
      finalize(1, { audio_sample_rate: 0, sample_rate: null, sampling_rate: '24000.0', sr: 32000 });
      finalize(2, { sample_rate: 16000.9 });
      finalize(3, {});
      finalize(4, undefined);
      const text = await handle.metricsText();
      const expectations: Array<[number, number]> = [
        [0, 96000 / 48000], // output_sample_rate comes first
        [1, 96000 / 32000], // 0, null and "24000.0" are skipped
        [2, 96000 / 16000], // int() truncation
        [3, 96000 / 24000], // default
        [4, 96000 / 24000],
      ];
      for (const [replica, duration] of expectations) {
        assertHistogram(text, DURATION, stageLabels(0, replica), SECONDS_BUCKETS, [duration]);
        // No generation time: RTF 0 is still observed.
        assertHistogram(text, RTF, stageLabels(0, replica), RTF_BUCKETS, [0]);
      }
    });

    it('audio output without audio data counts a no_audio_data skip and nothing else', async () => {
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 2,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 800 },
        multimodalOutput: {},
      });
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 2,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 800 },
        multimodalOutput: { audio: [] },
      });
      const text = await handle.metricsText();
      assert.deepEqual(seriesOf(text, SKIPPED), [stageLabels(2, 0, { reason: 'no_audio_data' })]);
      assertSample(text, SKIPPED, stageLabels(2, 0, { reason: 'no_audio_data' }), 2);
      assertNoSeries(text, FRAMES, DURATION, RTF, TTFP, UNDERRUN, CONTINUITY);
    });

    it('text output, a missing replica or missing stage metrics produce nothing', async () => {
      const full = {
        outputType: 'audio',
        stageId: 2,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 100, audioGeneratedFrames: 24000 },
        multimodalOutput: { audio: new Int16Array(24000) },
      };
      handle.audio.observeModalityAtFinalize({ ...full, outputType: 'text' });
      handle.audio.observeModalityAtFinalize({ ...full, outputType: 'image' });
      handle.audio.observeModalityAtFinalize({ ...full, outputType: null });
      handle.audio.observeModalityAtFinalize({ ...full, replicaId: null });
      handle.audio.observeModalityAtFinalize({ ...full, replicaId: undefined });
      handle.audio.observeModalityAtFinalize({ ...full, stageMetrics: null });
      const text = await handle.metricsText();
      assertNoSeries(text, ...AUDIO_FAMILIES);
    });

    it('replica 0 is a real replica, not a missing one', async () => {
      handle.audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 0,
        replicaId: 0,
        stageMetrics: { audioGeneratedFrames: 1 },
      });
      const text = await handle.metricsText();
      assertSample(text, FRAMES, stageLabels(0, 0), 1);
    });
  });

  describe('observeAudioFirstPacket', () => {
    it('observes now - arrival; clock skew clamps to 0', async () => {
      handle.audio.observeAudioFirstPacket({ stageId: 2, replicaId: 0, arrivalTs: 1000, nowTs: 1000.35 });
      handle.audio.observeAudioFirstPacket({ stageId: 2, replicaId: 1, arrivalTs: 1000, nowTs: 999.5 });
      const text = await handle.metricsText();
      const ttfp = assertHistogram(text, TTFP, stageLabels(2, 0), SECONDS_BUCKETS, [1000.35 - 1000]);
      assert.ok(Math.abs(ttfp.sum - 0.35) < 1e-9);
      assert.equal(bucketCount(ttfp, '0.25'), 0);
      assert.equal(bucketCount(ttfp, '0.5'), 1);
      const skewed = assertHistogram(text, TTFP, stageLabels(2, 1), SECONDS_BUCKETS, [0]);
      assert.equal(bucketCount(skewed, '0.05'), 1);
      assert.equal(skewed.sum, 0);
    });

    it('skips arrivalTs <= 0 and a missing replica', async () => {
      handle.audio.observeAudioFirstPacket({ stageId: 2, replicaId: 0, arrivalTs: 0, nowTs: 5 });
      handle.audio.observeAudioFirstPacket({ stageId: 2, replicaId: 0, arrivalTs: -1, nowTs: 5 });
      handle.audio.observeAudioFirstPacket({ stageId: 2, replicaId: null, arrivalTs: 1, nowTs: 5 });
      handle.audio.observeAudioFirstPacket({ stageId: 2, replicaId: undefined, arrivalTs: 1, nowTs: 5 });
      const text = await handle.metricsText();
      assertNoSeries(text, TTFP);
    });
  });

  describe('observeAudioStreamingFinalize (audio-continuity.md worked examples)', () => {
    const example1 = { chunkArrivalTimesS: [0.2, 0.35, 0.8], chunkBytes: [9600, 4800, 19200], sampleRate: 24000 };
    // Hand computation: only the third arrival is late. The player has consumed (0.8 - 0.2) s worth of bytes but
    // received only the first two chunks (9600 + 4800 B): the deficit in seconds, in the simulation's own order.
    const example1Underrun = ((0.8 - 0.2) * BYTES_PER_S_24K - (9600 + 4800)) / BYTES_PER_S_24K;

    it('example 1: one underrun observation of about 0.3 s, not continuous at 100 ms', async () => {
      assert.ok(Math.abs(example1Underrun - 0.3) < 1e-12);
      handle.audio.observeAudioStreamingFinalize({ stageId: 2, replicaId: 0, ...example1 });
      const text = await handle.metricsText();
      const underrun = assertHistogram(text, UNDERRUN, stageLabels(2, 0), SECONDS_FAST_BUCKETS, [example1Underrun]);
      assert.equal(underrun.count, 1);
      assert.equal(bucketCount(underrun, '0.25'), 0);
      assert.equal(bucketCount(underrun, '0.5'), 1);
      assert.equal(underrun.sum, 0.3000000000000001, 'IEEE: 0.8 - 0.2 = 0.6000000000000001');
      assert.deepEqual(seriesOf(text, CONTINUITY), []);
    });

    it('example 1 with thresholdS 0.5: continuous, threshold_ms="500"', async () => {
      handle.audio.observeAudioStreamingFinalize({ stageId: 2, replicaId: 0, ...example1, thresholdS: 0.5 });
      const text = await handle.metricsText();
      assertHistogram(text, UNDERRUN, stageLabels(2, 0), SECONDS_FAST_BUCKETS, [example1Underrun]);
      assert.deepEqual(seriesOf(text, CONTINUITY), [stageLabels(2, 0, { threshold_ms: '500' })]);
      assertSample(text, CONTINUITY, stageLabels(2, 0, { threshold_ms: '500' }), 1);
    });

    it('boundary example: a deficit of exactly the threshold is continuous (inclusive)', async () => {
      handle.audio.observeAudioStreamingFinalize({
        stageId: 2,
        replicaId: 0,
        chunkArrivalTimesS: [0.0, 0.2],
        chunkBytes: [4800, 4800],
        sampleRate: 24000,
      });
      const text = await handle.metricsText();
      // 0.2 s played = 9600 B, 4800 B received before the second chunk: 4800 B = 0.1 s.
      const underrun = assertHistogram(text, UNDERRUN, stageLabels(2, 0), SECONDS_FAST_BUCKETS, [0.1]);
      assert.equal(underrun.sum, 0.1);
      assert.equal(bucketCount(underrun, '0.05'), 0);
      assert.equal(bucketCount(underrun, '0.1'), 1);
      assertSample(text, CONTINUITY, stageLabels(2, 0, { threshold_ms: '100' }), 1);
    });

    it('example 2: the non-pausing clock reports the 0.4 s maximum once per request', async () => {
      handle.audio.observeAudioStreamingFinalize({
        stageId: 1,
        replicaId: 0,
        chunkArrivalTimesS: [0.0, 0.5, 0.6],
        chunkBytes: [4800, 4800, 4800],
        sampleRate: 24000,
      });
      const text = await handle.metricsText();
      const expected = (0.5 * BYTES_PER_S_24K - 4800) / BYTES_PER_S_24K;
      assertHistogram(text, UNDERRUN, stageLabels(1, 0), SECONDS_FAST_BUCKETS, [expected]);
      assert.deepEqual(seriesOf(text, CONTINUITY), []);
    });

    it('a stream that keeps up observes an underrun of 0 and counts continuity', async () => {
      handle.audio.observeAudioStreamingFinalize({
        stageId: 1,
        replicaId: 0,
        chunkArrivalTimesS: [0.0, 0.1, 0.2],
        chunkBytes: [9600, 9600, 9600],
        sampleRate: 24000,
      });
      handle.audio.observeAudioStreamingFinalize({
        stageId: 1,
        replicaId: 0,
        chunkArrivalTimesS: [3.0],
        chunkBytes: [100],
        sampleRate: 24000,
      });
      const text = await handle.metricsText();
      const underrun = assertHistogram(text, UNDERRUN, stageLabels(1, 0), SECONDS_FAST_BUCKETS, [0, 0]);
      assert.equal(bucketCount(underrun, '0.001'), 2);
      assertSample(text, CONTINUITY, stageLabels(1, 0, { threshold_ms: '100' }), 2);
    });

    it('stereo: channels double the byte rate', async () => {
      handle.audio.observeAudioStreamingFinalize({
        stageId: 1,
        replicaId: 0,
        chunkArrivalTimesS: [0.0, 1.0],
        chunkBytes: [200, 200],
        sampleRate: 100,
        channels: 2,
      });
      const text = await handle.metricsText();
      // 400 B/s: 400 B played, 200 B received → 200 B = 0.5 s.
      assertHistogram(text, UNDERRUN, stageLabels(1, 0), SECONDS_FAST_BUCKETS, [0.5]);
      assert.deepEqual(seriesOf(text, CONTINUITY), []);
    });

    it('threshold_ms is int(thresholdS * 1000): 1.005 s gives "1004"', async () => {
      handle.audio.observeAudioStreamingFinalize({ stageId: 2, replicaId: 0, ...example1, thresholdS: 1.005 });
      const text = await handle.metricsText();
      assert.equal(Math.trunc(1.005 * 1000), 1004);
      assert.deepEqual(seriesOf(text, CONTINUITY), [stageLabels(2, 0, { threshold_ms: '1004' })]);
    });

    it('mismatched arrival / byte lists judge nothing: underrun 0, continuity counted', async () => {
      handle.audio.observeAudioStreamingFinalize({
        stageId: 2,
        replicaId: 0,
        chunkArrivalTimesS: [0.0, 5.0],
        chunkBytes: [100],
        sampleRate: 24000,
      });
      const text = await handle.metricsText();
      assertHistogram(text, UNDERRUN, stageLabels(2, 0), SECONDS_FAST_BUCKETS, [0]);
      assertSample(text, CONTINUITY, stageLabels(2, 0, { threshold_ms: '100' }), 1);
    });

    it('no arrivals or no replica: nothing is observed', async () => {
      handle.audio.observeAudioStreamingFinalize({ stageId: 2, replicaId: 0, chunkArrivalTimesS: [], chunkBytes: [], sampleRate: 24000 });
      handle.audio.observeAudioStreamingFinalize({ stageId: 2, replicaId: null, ...example1 });
      handle.audio.observeAudioStreamingFinalize({ stageId: 2, replicaId: undefined, ...example1 });
      const text = await handle.metricsText();
      assertNoSeries(text, UNDERRUN, CONTINUITY);
      assert.equal(histogramOf(text, UNDERRUN, stageLabels(2, 0)), undefined);
    });
  });
});
