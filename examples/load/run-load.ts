import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { performance } from 'node:perf_hooks';
import { summarizeGoodput, type GoodputSummary } from './goodput-summary';
import { summarizeLatencies, type LatencySummary } from './latency-summary';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions } from './load-options';
import { planRequests, type PlannedRequest } from './load-plan';
import { runScaleSchedule, type ScaleEvent } from './scale-schedule';

/**
 * `failed`: the server answered with a 5xx error, the pipeline failing the request (a stage error
 * is one the simulator makes on purpose now and then); `error`: anything else went wrong.
 */
export type RequestOutcome = 'ok' | 'aborted' | 'failed' | 'error';

export interface RequestResult {
  readonly index: number;
  readonly outcome: RequestOutcome;
  readonly stream: boolean;
  readonly audio: boolean;
  /** Sent to the images API. */
  readonly image: boolean;
  /** Images received. */
  readonly images: number;
  /** First text or audio delta, seconds after sending (streaming requests). */
  readonly ttftSeconds?: number;
  /** First audio delta, seconds after sending (streaming requests with audio). */
  readonly audioTtfpSeconds?: number;
  /** `usage.completion_tokens` of the answer, when the server reported it. */
  readonly outputTokens?: number;
  /** Sending to the last byte, seconds (completed requests). */
  readonly e2eSeconds?: number;
  readonly finishReason?: string;
  readonly text: string;
  readonly audioBytes: number;
  readonly error?: string;
}

export interface LoadSummary {
  readonly model: string;
  readonly requests: number;
  readonly outcomes: Readonly<Record<RequestOutcome, number>>;
  /** Error messages (first 160 characters) and how often each was seen. */
  readonly errors: Readonly<Record<string, number>>;
  /** Completed requests by finish reason. */
  readonly finishReasons: Readonly<Record<string, number>>;
  readonly ttft: LatencySummary;
  readonly e2e: LatencySummary;
  /** Seconds of PCM16 audio received (24 kHz mono). */
  readonly audioSeconds: number;
  /** Images received from the images API. */
  readonly images: number;
  /** Image requests sent as chat requests instead, because the server serves no images API (it answered 404). */
  readonly imagesNotServed: number;
  /** What the scaling steps did, in schedule order. */
  readonly scaling: readonly ScaleEvent[];
  /** With objectives (`slo`): the goodput the client saw. */
  readonly goodput?: GoodputSummary;
  readonly wallSeconds: number;
  readonly results: readonly RequestResult[];
}

export interface LoadProgress {
  readonly done: number;
  readonly total: number;
  readonly outcomes: Readonly<Record<RequestOutcome, number>>;
}

export interface RunLoadHooks {
  /** After every finished request. */
  readonly onProgress?: (progress: LoadProgress) => void;
}

/** Bytes per second of the server's audio: PCM16 mono at 24 kHz. */
const PCM_BYTES_PER_SECOND = 24000 * 2;

/** The audio part of a streamed delta; the OpenAI client's `Delta` type has no `audio` (yet). */
type DeltaWithAudio = ChatCompletionChunk.Choice.Delta & { readonly audio?: { readonly data?: string } };

/**
 * Drives an OpenAI-compatible server with the official `openai` client: a seeded mix of streaming
 * and non-streaming, text and audio chat requests and image generations, `concurrency` at a time, where some streaming clients
 * disconnect mid-stream (AbortController). Never throws for a failed request: failures are counted.
 */
export async function runLoad(partial: Partial<LoadOptions> = {}, hooks: RunLoadHooks = {}): Promise<LoadSummary> {
  const options: LoadOptions = { ...DEFAULT_LOAD_OPTIONS, ...partial };
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: 'unused', maxRetries: 0, timeout: options.timeoutMs });
  const model = options.model ?? (await firstModel(client));
  const plan = planRequests(options);
  const results: RequestResult[] = [];
  const outcomes: Record<RequestOutcome, number> = { ok: 0, aborted: 0, failed: 0, error: 0 };
  const started = performance.now();
  const scaling =
    options.scale && options.scale.length > 0
      ? runScaleSchedule(options.scale, new URL('/admin/replicas', options.baseUrl).href, options.adminToken ?? '', started)
      : undefined;
  let next = 0;
  const images: ImagesApi = { served: true, rerouted: 0 };

  const worker = async (): Promise<void> => {
    while (next < plan.length) {
      const request = plan[next++];
      const result = await runOne(client, model, request, images);
      results.push(result);
      outcomes[result.outcome] += 1;
      hooks.onProgress?.({ done: results.length, total: plan.length, outcomes: { ...outcomes } });
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, plan.length) }, worker));
  // Steps due after the last request are not run.
  const scaleEvents = (await scaling?.finish()) ?? [];

  results.sort((a, b) => a.index - b.index);
  const wallSeconds = (performance.now() - started) / 1000;
  return {
    model,
    requests: plan.length,
    outcomes,
    errors: countBy(results.filter((r) => r.error !== undefined).map((r) => (r.error as string).slice(0, 160))),
    finishReasons: countBy(results.filter((r) => r.outcome === 'ok').map((r) => r.finishReason ?? 'none')),
    ttft: summarizeLatencies(results.flatMap((r) => (r.ttftSeconds === undefined ? [] : [r.ttftSeconds]))),
    e2e: summarizeLatencies(results.flatMap((r) => (r.outcome === 'ok' && r.e2eSeconds !== undefined ? [r.e2eSeconds] : []))),
    audioSeconds: results.reduce((sum, r) => sum + r.audioBytes, 0) / PCM_BYTES_PER_SECOND,
    images: results.reduce((sum, r) => sum + r.images, 0),
    imagesNotServed: images.rerouted,
    scaling: scaleEvents,
    ...(options.slo === undefined ? {} : { goodput: summarizeGoodput(options.slo, results, wallSeconds) }),
    wallSeconds,
    results,
  };
}

async function firstModel(client: OpenAI): Promise<string> {
  const page = await client.models.list();
  const model = page.data[0]?.id;
  if (model === undefined) throw new Error('the server lists no models; pass --model');
  return model;
}

function paramsOf(model: string, request: PlannedRequest): ChatCompletionCreateParamsBase {
  return {
    model,
    messages: [{ role: 'user', content: request.prompt }],
    max_tokens: request.maxTokens,
    ...(request.audio ? { modalities: ['text', 'audio'] as const, audio: { voice: 'alloy', format: 'pcm16' } as const } : {}),
  };
}

/** Whether the server serves the images API, learnt from its first answer, and how many image requests went to chat instead. */
interface ImagesApi {
  served: boolean;
  rerouted: number;
}

async function runOne(client: OpenAI, model: string, request: PlannedRequest, images: ImagesApi): Promise<RequestResult> {
  if (request.image === undefined) return runChat(client, model, request);
  if (images.served) {
    const result = await runImage(client, model, request, request.image);
    if (result !== 'not-served') return result;
    images.served = false;
  }
  // A server without an image stage (IMAGE_REPLICAS=0) answers 404: its own choice, not an error of the run.
  images.rerouted++;
  return runChat(client, model, { ...request, image: undefined });
}

async function runImage(
  client: OpenAI,
  model: string,
  request: PlannedRequest,
  image: NonNullable<PlannedRequest['image']>,
): Promise<RequestResult | 'not-served'> {
  const base = { index: request.index, stream: false, audio: false, image: true, text: '', audioBytes: 0 };
  const sent = performance.now();
  try {
    const response = await client.images.generate({ model, prompt: request.prompt, n: image.n, size: image.size, response_format: 'b64_json' });
    const images = response.data?.filter((item) => item.b64_json).length ?? 0;
    if (images !== image.n) throw new Error(`asked for ${image.n} images, got ${images}`);
    return { ...base, outcome: 'ok', images, e2eSeconds: (performance.now() - sent) / 1000, finishReason: 'stop' };
  } catch (error) {
    if (error instanceof OpenAI.NotFoundError) return 'not-served';
    return { ...base, images: 0, ...failure(error) };
  }
}

async function runChat(client: OpenAI, model: string, request: PlannedRequest): Promise<RequestResult> {
  const base = { index: request.index, stream: request.stream, audio: request.audio, image: false, images: 0 };
  const sent = performance.now();
  const elapsed = (): number => (performance.now() - sent) / 1000;
  let text = '';
  let audioBytes = 0;
  let ttftSeconds: number | undefined;
  let audioTtfpSeconds: number | undefined;
  let outputTokens: number | undefined;
  const disconnect = new AbortController();
  try {
    if (!request.stream) {
      const completion = await client.chat.completions.create({ ...paramsOf(model, request), stream: false });
      const choice = completion.choices[0];
      text = choice?.message.content ?? '';
      audioBytes = base64Bytes(choice?.message.audio?.data);
      if (!choice?.finish_reason) throw new Error('completion without finish_reason');
      outputTokens = completion.usage?.completion_tokens;
      return { ...base, outcome: 'ok', e2eSeconds: elapsed(), finishReason: choice.finish_reason, text, audioBytes, outputTokens };
    }
    // The usage chunk gives the answer's tokens, what a time per output token divides by.
    const stream = await client.chat.completions.create(
      { ...paramsOf(model, request), stream: true, stream_options: { include_usage: true } },
      { signal: disconnect.signal },
    );
    let chunks = 0;
    let finishReason: string | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) outputTokens = chunk.usage.completion_tokens;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      const delta = choice.delta as DeltaWithAudio;
      const bytes = base64Bytes(delta.audio?.data);
      if (bytes > 0) audioTtfpSeconds ??= elapsed();
      if (delta.content || bytes > 0) {
        ttftSeconds ??= elapsed();
        text += delta.content ?? '';
        audioBytes += bytes;
        chunks += 1;
        if (request.disconnectAfterChunks !== undefined && chunks >= request.disconnectAfterChunks) {
          disconnect.abort();
          return { ...base, outcome: 'aborted', ttftSeconds, text, audioBytes };
        }
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    if (finishReason === undefined) throw new Error('stream ended without finish_reason');
    return { ...base, outcome: 'ok', ttftSeconds, audioTtfpSeconds, outputTokens, e2eSeconds: elapsed(), finishReason, text, audioBytes };
  } catch (error) {
    if (disconnect.signal.aborted) return { ...base, outcome: 'aborted', ttftSeconds, text, audioBytes };
    return { ...base, ttftSeconds, text, audioBytes, ...failure(error) };
  }
}

function failure(error: unknown): { outcome: 'failed' | 'error'; error: string } {
  const serverFailed = error instanceof OpenAI.APIError && error.status !== undefined && error.status >= 500;
  return { outcome: serverFailed ? 'failed' : 'error', error: error instanceof Error ? error.message : String(error) };
}

function base64Bytes(data: string | undefined): number {
  return data ? Buffer.byteLength(data, 'base64') : 0;
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
