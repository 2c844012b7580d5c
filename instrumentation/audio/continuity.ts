/** vLLM-Omni's default underrun budget: a gap longer than 0.1 s is audible in streamed speech. */
export const AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S = 0.1;

export interface ContinuityOptions {
  /** PCM sample rate in Hz. */
  sampleRate: number;
  /** Bytes per sample. Default 2 (s16le). */
  sampleWidth?: number;
  /** Interleaved channels. Default 1. */
  channels?: number;
  /** Largest underrun, in seconds, that still counts as continuous (inclusive). Default 0.1. */
  thresholdS?: number;
}

export interface ContinuityStats {
  /** The worst cumulative lateness, in seconds, seen at any chunk arrival. */
  maxUnderrunS: number;
  /** Chunk arrivals at which the player was starved; a long stall counts once per late chunk, not once per gap. */
  underrunEventCount: number;
  /** `maxUnderrunS <= thresholdS`. */
  isContinuous: boolean;
}

const NOTHING_TO_JUDGE: Readonly<ContinuityStats> = Object.freeze({
  maxUnderrunS: 0,
  underrunEventCount: 0,
  isContinuous: true,
});

/**
 * Port of vLLM-Omni's `compute_continuity_stats` (`vllm_omni/benchmarks/audio_continuity.py`): a player starts at
 * the first chunk's arrival and consumes PCM at real-time rate without ever pausing; at each later arrival, the
 * bytes it would have played minus the bytes received before that chunk is the deficit. There is no prebuffer,
 * chunk 0 is never checked, and the tail after the last chunk is not examined.
 *
 * `arrivalsS[i]` is when chunk i's last byte arrived (seconds, any common origin); `chunkBytes[i]` its PCM size.
 * The arithmetic keeps upstream's operation order, so results match it bit for bit, boundaries included.
 */
export function computeContinuityStats(
  arrivalsS: readonly number[],
  chunkBytes: readonly number[],
  { sampleRate, sampleWidth = 2, channels = 1, thresholdS = AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S }: ContinuityOptions,
): ContinuityStats {
  const n = arrivalsS.length;
  if (n === 0 || n !== chunkBytes.length) return { ...NOTHING_TO_JUDGE };

  const bytesPerS = sampleRate * sampleWidth * channels;
  // Upstream tests `<= 0` on Python ints; the negated form also turns away a NaN format instead of reporting NaN.
  if (!(bytesPerS > 0)) return { ...NOTHING_TO_JUDGE };

  const t0 = arrivalsS[0];
  let receivedBefore = 0;
  let maxUnderrunS = 0;
  let underrunEventCount = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0) {
      const playedBytes = (arrivalsS[i] - t0) * bytesPerS;
      const deficitBytes = playedBytes - receivedBefore;
      if (deficitBytes > 0) {
        const deficitS = deficitBytes / bytesPerS;
        if (deficitS > maxUnderrunS) maxUnderrunS = deficitS;
        underrunEventCount += 1;
      }
    }
    // Added after the check: a chunk cannot cover its own arrival.
    receivedBefore += chunkBytes[i];
  }

  return { maxUnderrunS, underrunEventCount, isContinuous: maxUnderrunS <= thresholdS };
}
