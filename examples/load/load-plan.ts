import { SeededRandom } from '../pipeline/seeded-random';
import type { LoadOptions } from './load-options';

/** One request of a run, decided up front so a seed reproduces the whole mix. */
export interface PlannedRequest {
  readonly index: number;
  readonly prompt: string;
  readonly maxTokens: number;
  readonly stream: boolean;
  readonly audio: boolean;
  /** A streaming client that disconnects after this many content chunks. */
  readonly disconnectAfterChunks?: number;
  /** Set for a request to the images API (then `stream`, `audio` and `maxTokens` do not apply). */
  readonly image?: { readonly n: number; readonly size: ImageSize };
}

export type ImageSize = '256x256' | '512x512';

/**
 * Prompts, most popular first: popular ones come back often, which is what makes prefix caching
 * pay off (and shows up in `vllm:prefix_cache_hits_total`).
 */
const PROMPTS: readonly string[] = Object.freeze([
  'What is the weather like in Paris today?',
  'Tell me a short story about a river at dawn.',
  'Explain how a speech vocoder turns codec tokens into audio.',
  'Summarize the plot of a mystery novel in three sentences.',
  'Give me three tips for presenting to a large audience.',
  'How do prefix caches speed up large language model serving?',
  'Describe the sound of rain on a tin roof.',
  'What should I cook tonight with rice, beans and peppers?',
  'Read this aloud: the quick brown fox jumps over the lazy dog.',
  'Why do streaming audio players need a jitter buffer?',
  'Translate good morning, how are you into French and explain it.',
  'Write a haiku about latency.',
]);

export function planRequests(options: LoadOptions): PlannedRequest[] {
  const random = new SeededRandom(options.seed);
  const minTokens = Math.max(1, Math.floor(options.maxTokens / 4));
  return Array.from({ length: options.requests }, (_, index) => {
    // Squaring skews the choice toward the first prompts (a Zipf-like popularity).
    const prompt = PROMPTS[Math.floor(random.next() ** 2 * PROMPTS.length)];
    const maxTokens = minTokens + random.nextInt(options.maxTokens - minTokens + 1);
    const stream = random.chance(options.streamRatio);
    const audio = random.chance(options.audioRatio);
    const disconnectAfterChunks = stream && random.chance(options.disconnectRatio) ? 1 + random.nextInt(4) : undefined;
    // Drawn for every request, so the image ratio decides which requests are images and changes nothing else.
    const imageDraw = random.next();
    const image = { n: 1 + random.nextInt(2), size: random.chance(0.5) ? ('256x256' as const) : ('512x512' as const) };
    if (imageDraw < options.imageRatio) return { index, prompt, maxTokens, stream: false, audio: false, image };
    return { index, prompt, maxTokens, stream, audio, disconnectAfterChunks };
  });
}
