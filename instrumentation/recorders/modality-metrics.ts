import { AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S, computeContinuityStats } from '../audio/continuity';
import { computeAudioRtf } from '../audio/audio-rtf';
import { resolveAudioSampleRate } from '../audio/sample-rate';
import { countAudioFrames } from '../audio/frames';
import type { LabelValue } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import { clampedAtZero, isPositive, UnreadableInput } from './never-throw';
import type { RecorderOptions } from './pipeline-metrics';

/** What the final stage reports about a finished request (vLLM-Omni `StageRequestStats`). */
export interface StageMetrics {
  /** Stage submit to output, milliseconds (includes queueing, as upstream). */
  readonly stageGenTimeMs?: number | null;
  /** Frames the stage generated; when absent they are counted from the audio chunks. */
  readonly audioGeneratedFrames?: number | null;
}

/** A request's final output, as `OmniModalityMetrics.observeModalityAtFinalize` takes it. */
export interface FinalizeInput {
  /** The request's final output type; only `"audio"` produces audio metrics. */
  readonly outputType: string | null | undefined;
  /** The final stage (the `stage` label). */
  readonly stageId: LabelValue;
  /** The replica that served it (the `replica` label); null or undefined records nothing. */
  readonly replicaId: LabelValue | null | undefined;
  /** The final stage's statistics (generation time, frames); null or undefined records nothing. */
  readonly stageMetrics: StageMetrics | null | undefined;
  /** The multimodal output: `{ audio: chunk | chunk[], sample_rate?: … }`. */
  readonly multimodalOutput?: unknown;
}

/** A request's first audio packet, as `OmniModalityMetrics.observeAudioFirstPacket` takes it. */
export interface FirstPacketInput {
  /** The stage that produced the packet (the `stage` label). */
  readonly stageId: LabelValue;
  /** The replica that produced it (the `replica` label); null or undefined records nothing. */
  readonly replicaId: LabelValue | null | undefined;
  /** Request arrival, wall-clock seconds. */
  readonly arrivalTs: number;
  /** First audio packet, wall-clock seconds. */
  readonly nowTs: number;
}

/** A streamed request's audio chunks, as `OmniModalityMetrics.observeAudioStreamingFinalize` takes them. */
export interface StreamingFinalizeInput {
  /** The stage that streamed the audio (the `stage` label). */
  readonly stageId: LabelValue;
  /** The replica that streamed it (the `replica` label); null or undefined records nothing. */
  readonly replicaId: LabelValue | null | undefined;
  /** Per non-empty chunk: seconds since the request arrived. */
  readonly chunkArrivalTimesS: readonly number[];
  /** Per non-empty chunk: PCM bytes. */
  readonly chunkBytes: readonly number[];
  /** PCM sample rate of the chunks, Hz (16-bit samples). */
  readonly sampleRate: number;
  /** Interleaved PCM channels; default 1. */
  readonly channels?: number;
  /** Largest underrun, seconds, that still counts as continuous (`audio_continuity_ok`, its `threshold_ms` label); default 0.1. */
  readonly thresholdS?: number;
}

/**
 * Audio SLO metrics (vLLM-Omni `OmniModalityMetrics`), per (stage, replica): time to first
 * packet, duration, real-time factor, frames, player underrun / continuity, and silent loss.
 * Series are bound on first observation, after the guards.
 */
export class OmniModalityMetrics {
  private readonly logStats: boolean;
  private readonly ttfp: SeriesTable;
  private readonly duration: SeriesTable;
  private readonly rtf: SeriesTable;
  private readonly frames: SeriesTable;
  private readonly underrun: SeriesTable;
  private readonly continuityOk: SeriesTable;
  private readonly skipped: SeriesTable;
  private readonly unreadable = new UnreadableInput('OmniModalityMetrics');

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions) {
    this.logStats = options.logStats;
    const model = [options.modelName];
    this.ttfp = new SeriesTable(store, 'pipeline.audioTtfp', model);
    this.duration = new SeriesTable(store, 'pipeline.audioDuration', model);
    this.rtf = new SeriesTable(store, 'pipeline.audioRtf', model);
    this.frames = new SeriesTable(store, 'pipeline.audioFrames', model);
    this.underrun = new SeriesTable(store, 'pipeline.audioUnderrun', model);
    this.continuityOk = new SeriesTable(store, 'pipeline.audioContinuityOk', model);
    this.skipped = new SeriesTable(store, 'pipeline.audioSkippedRequests', model);
  }

  /** One request's time from arrival to its first audio packet, seconds (`audio_ttfp_s`). */
  observeAudioTtfp(stage: LabelValue, replica: LabelValue, seconds: number): void {
    if (this.logStats) this.ttfp.get(stage, replica).record(seconds);
  }

  /** One request's generated audio duration, seconds (`audio_duration_s`). */
  observeAudioDuration(stage: LabelValue, replica: LabelValue, seconds: number): void {
    if (this.logStats) this.duration.get(stage, replica).record(seconds);
  }

  /** One request's real-time factor, generation time over audio duration (`audio_rtf`). */
  observeAudioRtf(stage: LabelValue, replica: LabelValue, rtf: number): void {
    if (this.logStats) this.rtf.get(stage, replica).record(rtf);
  }

  /** Zero or negative frame counts create no series. */
  incAudioFrames(stage: LabelValue, replica: LabelValue, frames: number): void {
    if (this.logStats && isPositive(frames)) this.frames.get(stage, replica).record(frames);
  }

  /** Negative underruns clamp to 0. */
  observeAudioUnderrun(stage: LabelValue, replica: LabelValue, seconds: number): void {
    if (this.logStats) this.underrun.get(stage, replica).record(clampedAtZero(seconds));
  }

  /** `threshold_ms` is truncated to an integer, as upstream's `str(int(threshold_ms))`; a label that is not a number is kept as given. */
  incAudioContinuityOk(stage: LabelValue, replica: LabelValue, thresholdMs: number): void {
    if (this.logStats) this.continuityOk.get(stage, replica, typeof thresholdMs === 'number' ? Math.trunc(thresholdMs) : thresholdMs).record(1);
  }

  /** An empty reason is recorded as `unknown`. */
  incAudioSkipped(stage: LabelValue, replica: LabelValue, reason: string | null | undefined): void {
    if (this.logStats) this.skipped.get(stage, replica, reason || 'unknown').record(1);
  }

  /**
   * Final-stage finalize of one request: frames, then duration and RTF, or a `no_audio_data`
   * silent-loss count when the request produced no audio. Never TTFP or underrun. Returns the
   * real-time factor it observed, if any (what the request is judged on by the `slo` option).
   */
  observeModalityAtFinalize(input: FinalizeInput): number | undefined {
    if (!this.logStats) return undefined;
    let stage: LabelValue, replicaId: LabelValue, generationSeconds: number, sampleRate: number, frames: number;
    try {
      const { stageMetrics } = input;
      const replica = input.replicaId;
      if (replica === null || replica === undefined || !stageMetrics || input.outputType !== 'audio') return undefined;
      stage = input.stageId;
      replicaId = replica;
      generationSeconds = Number(stageMetrics.stageGenTimeMs ?? 0) / 1000;
      const mmOut = input.multimodalOutput ?? {};
      sampleRate = resolveAudioSampleRate(mmOut);
      frames = Math.trunc(Number(stageMetrics.audioGeneratedFrames ?? 0)) || countAudioFrames(mmOut);
    } catch {
      this.unreadable.dropped('observeModalityAtFinalize');
      return undefined;
    }
    this.incAudioFrames(stage, replicaId, frames);
    const durationSeconds = sampleRate > 0 ? frames / sampleRate : 0;
    if (!(durationSeconds > 0)) {
      this.incAudioSkipped(stage, replicaId, 'no_audio_data');
      return undefined;
    }
    const rtf = computeAudioRtf(generationSeconds, durationSeconds);
    this.observeAudioDuration(stage, replicaId, durationSeconds);
    this.observeAudioRtf(stage, replicaId, rtf);
    // A generation time that is no number gives no ratio: the histogram refused it, and nothing is judged on it.
    return Number.isFinite(rtf) ? rtf : undefined;
  }

  /** First audio packet of a request; the once-per-request guard is the caller's. Skew clamps to 0. */
  observeAudioFirstPacket(input: FirstPacketInput): void {
    if (!this.logStats) return;
    let stage: LabelValue, replica: LabelValue | null | undefined, arrivalTs: unknown, nowTs: unknown;
    try {
      ({ stageId: stage, replicaId: replica, arrivalTs, nowTs } = input);
    } catch {
      return this.unreadable.dropped('observeAudioFirstPacket');
    }
    if (replica === null || replica === undefined || !isPositive(arrivalTs)) return;
    this.observeAudioTtfp(stage, replica, typeof nowTs === 'number' ? clampedAtZero(nowTs - arrivalTs) : (nowTs as number));
  }

  /**
   * End of an audio stream: the player simulation's worst underrun is always observed; the
   * continuity counter moves when it stayed within the threshold (inclusive).
   */
  observeAudioStreamingFinalize(input: StreamingFinalizeInput): void {
    if (!this.logStats) return;
    let stage: LabelValue, replica: LabelValue, stats: ReturnType<typeof computeContinuityStats>, thresholdMs: number;
    try {
      const replicaId = input.replicaId;
      if (replicaId === null || replicaId === undefined || input.chunkArrivalTimesS.length === 0) return;
      stage = input.stageId;
      replica = replicaId;
      const thresholdS = input.thresholdS ?? AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S;
      stats = computeContinuityStats(input.chunkArrivalTimesS, input.chunkBytes, {
        sampleRate: input.sampleRate,
        channels: input.channels ?? 1,
        thresholdS,
      });
      thresholdMs = Math.trunc(thresholdS * 1000);
    } catch {
      return this.unreadable.dropped('observeAudioStreamingFinalize');
    }
    this.observeAudioUnderrun(stage, replica, stats.maxUnderrunS);
    if (stats.isContinuous) this.incAudioContinuityOk(stage, replica, thresholdMs);
  }
}
