/**
 * Frames in a multimodal output's audio (vLLM-Omni `count_audio_frames`): the `audio` entry (or
 * `model_outputs`), one chunk or a list of chunks. A chunk with a `shape` counts its last axis
 * (`[channels, samples]` → samples); typed arrays and plain arrays count their length; a scalar
 * counts 1. Chunks that cannot be read are skipped.
 */
export function countAudioFrames(multimodalOutput: unknown): number {
  if (multimodalOutput === null || typeof multimodalOutput !== 'object') return 0;
  const record = multimodalOutput as Record<string, unknown>;
  const audio = record.audio ?? record.model_outputs;
  if (audio === undefined || audio === null) return 0;
  const chunks = Array.isArray(audio) && !isSampleArray(audio) ? audio : [audio];
  let frames = 0;
  for (const chunk of chunks) frames += framesInChunk(chunk);
  return frames;
}

function framesInChunk(chunk: unknown): number {
  try {
    if (chunk === null || chunk === undefined) return 0;
    if (ArrayBuffer.isView(chunk)) return (chunk as unknown as ArrayLike<unknown>).length;
    if (Array.isArray(chunk)) return chunk.length;
    if (typeof chunk === 'object') {
      const shape = (chunk as { shape?: unknown }).shape;
      if (Array.isArray(shape) && shape.length > 0) return Number(shape[shape.length - 1]) || 0;
      const length = (chunk as { length?: unknown }).length;
      if (typeof length === 'number') return length;
    }
    return 1;
  } catch {
    return 0;
  }
}

/** A plain array of numbers is one chunk of samples, not a list of chunks. */
function isSampleArray(value: unknown[]): boolean {
  return value.length > 0 && typeof value[0] === 'number';
}

/**
 * PCM bytes of the newest chunk of a streamed audio output (vLLM-Omni `audio_chunk_pcm_bytes`):
 * element count × 2, the s16le mono assumption upstream makes. 0 when there is no audio.
 */
export function audioChunkPcmBytes(multimodalOutput: unknown): number {
  if (multimodalOutput === null || typeof multimodalOutput !== 'object') return 0;
  const audio = (multimodalOutput as Record<string, unknown>).audio;
  if (audio === undefined || audio === null) return 0;
  const chunk = Array.isArray(audio) && !isSampleArray(audio) ? audio[audio.length - 1] : audio;
  return elementCount(chunk) * 2;
}

function elementCount(chunk: unknown): number {
  if (chunk === null || chunk === undefined) return 0;
  if (ArrayBuffer.isView(chunk) || Array.isArray(chunk)) return (chunk as ArrayLike<unknown>).length;
  const shape = (chunk as { shape?: unknown }).shape;
  if (Array.isArray(shape)) return shape.reduce((product: number, dim) => product * (Number(dim) || 0), 1);
  return 0;
}
