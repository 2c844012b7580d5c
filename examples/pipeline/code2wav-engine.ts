import { createSchedulerStats, type EngineCoreEvent, type SchedulerStats } from 'omni-otel-metrics';
import { PcmSynthesizer } from './pcm-synthesizer';
import { hashString, SeededRandom } from './seeded-random';
import type { StageEngineOutput, StageInput } from './stage-engine';
import { SteppedEngine, type SteppedEngineOptions } from './stepped-engine';

/** Output rate of the vocoder (vLLM-Omni's default for Qwen-Omni talkers). */
export const AUDIO_SAMPLE_RATE = 24000;
/** One codec frame is 80 ms of speech (a 12.5 Hz codec): 1920 samples at 24 kHz. */
export const SAMPLES_PER_CODEC_FRAME = 1920;

/** How fast one vocoder replica turns codec frames into audio. */
export interface Code2WavTiming {
  /** Processing seconds per second of audio for one stream alone; above 1 the replica cannot keep up with playback. */
  readonly rtf: number;
  /**
   * A batch runs in parallel on the accelerator, but not for free: each request beyond the first
   * makes the step this fraction longer (0 = perfect batching, 1 = no gain over running them in turn).
   */
  readonly batchSlowdown: number;
  /** Each step's speed varies uniformly by ± this fraction. */
  readonly rtfJitter: number;
  /** Chance that a step stalls (contention, a GC pause) ... */
  readonly stallProbability: number;
  /** ... and takes this many times longer. */
  readonly stallFactor: number;
  /** Fixed cost of any step, milliseconds. */
  readonly stepOverheadMs: number;
}

export interface Code2WavEngineOptions extends SteppedEngineOptions {
  readonly seed: number;
  readonly timing: Code2WavTiming;
  /** Codec frames vocoded per request per step (the streaming chunk size). */
  readonly framesPerStep: number;
  /** Requests vocoded together in one step. */
  readonly maxBatch: number;
  /** Chance that a request's codec input is malformed: it "succeeds" with empty audio (silent loss). */
  readonly malformedProbability: number;
}

interface VocoderJob {
  readonly requestId: string;
  readonly pending: number[];
  readonly malformed: boolean;
  readonly synthesizer: PcmSynthesizer;
  final: boolean;
  scheduled: boolean;
  pendingEvents: EngineCoreEvent[];
}

interface VocoderEntry {
  readonly job: VocoderJob;
  readonly codecIds: readonly number[];
}

/**
 * The audio stage (code2wav): receives a request's codec frames chunk by chunk, vocodes up to
 * `framesPerStep` of them per request per step, and buffers PCM16 chunks as step outputs. A step's
 * duration is its longest chunk's audio duration times the replica's real-time factor (stretched a
 * little per batched request), so a replica with RTF > 1 makes streaming listeners wait (underruns). Like the LLM engine it reports QUEUED/SCHEDULED events,
 * a `stop` finish once the final chunk is vocoded, and 1 Hz scheduler stats (no KV cache: usage 0).
 */
export class Code2WavEngine extends SteppedEngine<VocoderEntry> {
  private readonly options: Code2WavEngineOptions;
  private readonly random: SeededRandom;
  private readonly jobs = new Map<string, VocoderJob>();

  constructor(options: Code2WavEngineOptions) {
    if (!(options.timing.rtf > 0)) throw new RangeError(`rtf must be positive; got ${options.timing.rtf}`);
    if (!Number.isInteger(options.framesPerStep) || options.framesPerStep < 1) {
      throw new RangeError(`framesPerStep must be a positive integer; got ${options.framesPerStep}`);
    }
    super(options);
    this.options = options;
    this.random = new SeededRandom(options.seed);
  }

  submit(input: StageInput): void {
    let job = this.jobs.get(input.requestId);
    if (job === undefined) {
      job = {
        requestId: input.requestId,
        pending: [],
        // Decided once per request, from the replica's seeded stream: a bad request stays bad.
        malformed: this.random.chance(this.options.malformedProbability),
        synthesizer: new PcmSynthesizer(AUDIO_SAMPLE_RATE, SAMPLES_PER_CODEC_FRAME, new SeededRandom(hashString(input.requestId))),
        final: false,
        scheduled: false,
        pendingEvents: [{ type: 'QUEUED', timestamp: this.clock() }],
      };
      this.jobs.set(input.requestId, job);
    } else if (job.final) {
      throw new Error(`request ${input.requestId} already sent its final codec chunk`);
    }
    job.pending.push(...input.tokenIds);
    job.final = input.final;
    this.markStatsDirty();
    this.kick();
  }

  abort(requestId: string): void {
    if (this.jobs.delete(requestId)) this.markStatsDirty();
    this.dropBufferedOutputs(requestId);
  }

  protected forgetAllWork(): void {
    this.jobs.clear();
  }

  /** Jobs with frames to vocode, or a final chunk still to acknowledge, oldest first; none: idle. */
  protected planStep(): VocoderEntry[] | undefined {
    const now = this.clock();
    const entries: VocoderEntry[] = [];
    for (const job of this.jobs.values()) {
      if (entries.length >= this.options.maxBatch) break;
      if (job.pending.length === 0 && !job.final) continue;
      if (!job.scheduled) {
        job.scheduled = true;
        job.pendingEvents.push({ type: 'SCHEDULED', timestamp: now });
      }
      entries.push({ job, codecIds: job.pending.splice(0, this.options.framesPerStep) });
    }
    return entries.length > 0 ? entries : undefined;
  }

  /** The longest chunk of the batch at the replica's RTF, stretched by the batch size, jitter and stalls. */
  protected stepDurationMs(entries: readonly VocoderEntry[]): number {
    const { rtf, batchSlowdown, rtfJitter, stallProbability, stallFactor, stepOverheadMs } = this.options.timing;
    let longest = 0;
    for (const entry of entries) longest = Math.max(longest, entry.codecIds.length);
    const audioMs = (longest * SAMPLES_PER_CODEC_FRAME * 1000) / AUDIO_SAMPLE_RATE;
    const batch = 1 + batchSlowdown * (entries.length - 1);
    const jitter = 1 + rtfJitter * (this.random.next() * 2 - 1);
    const stall = this.random.chance(stallProbability) ? stallFactor : 1;
    return stepOverheadMs + audioMs * rtf * batch * jitter * stall;
  }

  protected runStep(entries: readonly VocoderEntry[]): StageEngineOutput[] {
    const outputs: StageEngineOutput[] = [];
    for (const { job, codecIds } of entries) {
      if (this.jobs.get(job.requestId) !== job) continue;
      const done = job.final && job.pending.length === 0;
      outputs.push({
        requestId: job.requestId,
        numNewTokens: codecIds.length,
        newTokenIds: [],
        audio: job.malformed ? new Int16Array(0) : job.synthesizer.synthesize(codecIds),
        finishReason: done ? 'stop' : undefined,
        events: job.pendingEvents.length > 0 ? job.pendingEvents.splice(0) : undefined,
      });
      if (done) this.jobs.delete(job.requestId);
    }
    // Every vocoder step moves frames along, so the next gate opening owes a snapshot.
    this.markStatsDirty();
    return outputs;
  }

  /** No KV cache here: usage is always 0. */
  protected schedulerStats(): SchedulerStats {
    let running = 0;
    for (const job of this.jobs.values()) if (job.scheduled) running += 1;
    return createSchedulerStats({
      numRunningReqs: running,
      numWaitingReqs: this.jobs.size - running,
      stepCounter: this.stepCounter,
      kvCacheUsage: 0,
    });
  }
}
