/**
 * vLLM-Omni's `compute_audio_rtf`: generation time divided by the duration of the audio generated. Below 1 the
 * audio is produced faster than it plays. 0 when there is no audio (`audioDurationSeconds <= 0`), so callers never
 * divide by zero or observe a negative ratio.
 */
export function computeAudioRtf(generationSeconds: number, audioDurationSeconds: number): number {
  if (audioDurationSeconds <= 0) return 0;
  return generationSeconds / audioDurationSeconds;
}
