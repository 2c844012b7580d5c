import type { ServerVadBatch, ServerVadDecision } from 'omni-otel-metrics';
import { InvalidRequestError } from './invalid-request-error';

/** The detector's rate and frame, as vLLM-Omni's server VAD runs Silero (16 kHz, 512-sample frames). */
export const SERVER_VAD_SAMPLE_RATE = 16_000;
const FRAME_SAMPLES = 512;
/** Audio one append may carry before it is refused as an input overflow (10 s). */
const MAX_APPEND_SAMPLES = SERVER_VAD_SAMPLE_RATE * 10;

/** OpenAI's `server_vad` turn detection (the fields the simulation uses). */
export interface ServerVadConfig {
  readonly threshold: number;
  readonly silenceDurationMs: number;
}

export const DEFAULT_SERVER_VAD: ServerVadConfig = { threshold: 0.5, silenceDurationMs: 500 };

/** An append refused because it carries more audio than a session takes at once: `reason` is what the metrics count it as. */
export class InputOverflowError extends InvalidRequestError {
  readonly reason = 'input_overflow';
}

/**
 * Endpointing for one realtime session's 16 kHz PCM16 stream: a frame's "speech probability" is its
 * RMS energy scaled to [0, 1] (a stand-in for Silero), speech starts at the threshold and a turn
 * ends after `silenceDurationMs` below it, as vLLM-Omni's `ThresholdEndpointPolicy` decides.
 */
export class ServerVadSession {
  private pending = new Int16Array(0);
  private speechActive = false;
  private silenceSamples = 0;

  constructor(private readonly config: ServerVadConfig = DEFAULT_SERVER_VAD) {}

  /** Runs the detector over the complete frames of `pcm16` (plus what is left from earlier appends). */
  push(pcm16: Int16Array): ServerVadBatch {
    const started = performance.now();
    if (pcm16.length > MAX_APPEND_SAMPLES) {
      throw new InputOverflowError(`one realtime append carries at most ${MAX_APPEND_SAMPLES} samples; got ${pcm16.length}`, 'audio');
    }
    const samples = new Int16Array(this.pending.length + pcm16.length);
    samples.set(this.pending);
    samples.set(pcm16, this.pending.length);
    const complete = samples.length - (samples.length % FRAME_SAMPLES);
    const frames: { decision: ServerVadDecision }[] = [];
    for (let offset = 0; offset < complete; offset += FRAME_SAMPLES) {
      frames.push({ decision: this.update(probability(samples.subarray(offset, offset + FRAME_SAMPLES))) });
    }
    this.pending = samples.slice(complete);
    return { inferenceMs: performance.now() - started, frames };
  }

  private update(speech: number): ServerVadDecision {
    if (speech >= this.config.threshold) {
      this.silenceSamples = 0;
      if (this.speechActive) return {};
      this.speechActive = true;
      return { speechStarted: true };
    }
    if (!this.speechActive) return {};
    this.silenceSamples += FRAME_SAMPLES;
    if (this.silenceSamples < (this.config.silenceDurationMs * SERVER_VAD_SAMPLE_RATE) / 1000) return {};
    const endpointDelayMs = Math.round((this.silenceSamples * 1000) / SERVER_VAD_SAMPLE_RATE);
    this.speechActive = false;
    this.silenceSamples = 0;
    return { speechStopped: true, endpointDelayMs };
  }
}

/** A frame's RMS energy relative to a loud voice (about -10 dBFS), clamped to [0, 1]. */
function probability(frame: Int16Array): number {
  let sum = 0;
  for (const sample of frame) sum += sample * sample;
  return Math.min(1, Math.sqrt(sum / frame.length) / 10_000);
}
