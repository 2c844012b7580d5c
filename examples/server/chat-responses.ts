/**
 * Bodies in OpenAI's `chat.completion` and `chat.completion.chunk` shapes. Audio travels as base64
 * of raw PCM16 (little-endian, mono, 24 kHz), as the OpenAI API does for `format: "pcm16"`.
 */

/** What every chunk and the completion of one response share. */
export interface CompletionIdentity {
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  readonly model: string;
  /** Id of the response's audio (`audio_<id>`). */
  readonly audioId: string;
}

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

export interface AudioPart {
  readonly id: string;
  readonly data: string;
  readonly expires_at: number;
  readonly transcript: string;
}

export interface ChunkDelta {
  readonly role?: 'assistant';
  readonly content?: string;
  readonly audio?: AudioPart;
}

/** How long a client may refer to the audio in a follow-up turn (OpenAI: one hour). */
const AUDIO_TTL_S = 3600;

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

export function pcm16Base64(chunks: readonly Int16Array[]): string {
  return Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))).toString('base64');
}

export function audioPart(identity: CompletionIdentity, chunks: readonly Int16Array[], transcript: string): AudioPart {
  return { id: identity.audioId, data: pcm16Base64(chunks), expires_at: identity.created + AUDIO_TTL_S, transcript };
}

export function chunkBody(identity: CompletionIdentity, delta: ChunkDelta, finishReason: string | null = null): object {
  return {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The `stream_options.include_usage` chunk: usage, no choices. */
export function usageChunkBody(identity: CompletionIdentity, usage: Usage): object {
  return { id: identity.id, object: 'chat.completion.chunk', created: identity.created, model: identity.model, choices: [], usage };
}

export function completionBody(
  identity: CompletionIdentity,
  message: { readonly content: string | null; readonly audio?: AudioPart },
  finishReason: string | null,
  usage: Usage,
): object {
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason }],
    usage,
  };
}
