import type { OmniRealtimeLike, OmniRequestOutput, OmniServingLike, RealtimeSessionRequest, ServerVadBatch } from 'omni-otel-metrics';
import { AUDIO_SAMPLE_RATE } from './code2wav-engine';
import { InvalidRequestError } from './invalid-request-error';
import type { Orchestrator } from './orchestrator';
import type { OutputModality, PipelineEvent, PipelineRequest } from './pipeline-types';
import { RequestStream } from './request-stream';
import { DEFAULT_SERVER_VAD, ServerVadSession } from './server-vad';
import type { ImageSpec } from './stage-engine';
import { ToyTokenizer } from './toy-tokenizer';

// A type alias, not an interface: only aliases are assignable to the contract's index-signature request type.
export type GenerateRequest = {
  readonly requestId: string;
  /** The rendered chat prompt. */
  readonly prompt: string;
  /** The thinker's `max_tokens`. */
  readonly maxTokens: number;
  /** Default `['text']`. Audio makes the request run through talker and code2wav; `['image']` through the image stage. */
  readonly modalities?: readonly OutputModality[];
  /** What to draw, for `modalities: ['image']`; steps default to the profile's. */
  readonly image?: Omit<ImageSpec, 'numInferenceSteps'> & { readonly numInferenceSteps?: number };
  /** Speaker for the talker; default `alloy`. */
  readonly voice?: string;
  /** Frontend wall-clock arrival, seconds; default now. */
  readonly arrivalTime?: number;
  /** OpenAI's `user` field: who the request is for (what the metrics' `tenant` label can read). */
  readonly user?: string;
  /** The HTTP request's headers, as Node gives them (lower-case names): what a header-sourced metrics label reads. */
  readonly headers?: Readonly<Record<string, string | readonly string[] | undefined>>;
};

export interface GenerateOptions {
  /** Aborting ends the stream at once, even while `generate` waits for the next output. */
  readonly signal?: AbortSignal;
}

/** What `generate` yields: the contract's output plus the full transcript on the last audio output. */
export interface PipelineOutput extends OmniRequestOutput {
  /** The thinker's whole text, on the finished output of an audio request. */
  readonly transcript?: string;
}

export interface AsyncOmniOptions {
  /** Prompt + max_tokens limit of the thinker (vLLM's `max_model_len`). */
  readonly maxModelLen: number;
  readonly tokenizer?: ToyTokenizer;
  /** Denoising steps of an image request that names none; default 20. */
  readonly defaultInferenceSteps?: number;
}

/**
 * The serving entry point (vLLM-Omni `AsyncOmni`): tokenizes the prompt, admits the request into
 * the orchestrator and turns its events into `OmniRequestOutput`s (text deltas from the thinker,
 * PCM16 chunks from code2wav). Whatever ends the iteration — the last output, the consumer's
 * `return()` (client disconnect), an abort signal or an error — `generate`'s `finally` calls
 * `orchestrator.cleanupRequest(requestId)` exactly once, which also aborts it in the engines.
 */
export class AsyncOmni implements OmniServingLike, OmniRealtimeLike {
  readonly maxModelLen: number;
  readonly tokenizer: ToyTokenizer;
  private readonly defaultInferenceSteps: number;
  /** The event stream of every request being generated, so `abort` can end it. */
  private readonly open = new Map<string, RequestStream<PipelineEvent>>();
  /** Open realtime sessions: their server VAD, or null when the client detects turns itself. */
  private readonly realtime = new Map<string, ServerVadSession | null>();

  constructor(
    private readonly orchestrator: Orchestrator,
    { maxModelLen, tokenizer = new ToyTokenizer(), defaultInferenceSteps = 20 }: AsyncOmniOptions,
  ) {
    this.maxModelLen = maxModelLen;
    this.tokenizer = tokenizer;
    this.defaultInferenceSteps = defaultInferenceSteps;
  }

  /** Ends these requests' streams now (an API cancel); their `generate` cleans them up as it returns. Unknown ids are ignored. */
  abort(requestId: string | readonly string[]): void {
    for (const id of typeof requestId === 'string' ? [requestId] : requestId) this.open.get(id)?.close();
  }

  /**
   * Opens a realtime audio session (vLLM-Omni's `/v1/realtime`); `turnDetection: { type: 'server_vad' }`
   * runs the server-side VAD on its audio, null leaves turns to the client.
   */
  openRealtimeSession(session: RealtimeSessionRequest): void {
    const type = session.turnDetection?.type ?? null;
    if (type !== null && type !== 'server_vad') throw new InvalidRequestError("turn_detection.type must be 'server_vad'", 'turn_detection');
    if (this.realtime.has(session.sessionId)) throw new InvalidRequestError(`realtime session ${session.sessionId} is already open`, 'session');
    this.realtime.set(session.sessionId, type === 'server_vad' ? new ServerVadSession(DEFAULT_SERVER_VAD) : null);
  }

  hasRealtimeSession(sessionId: string): boolean {
    return this.realtime.has(sessionId);
  }

  /** Appends 16 kHz mono PCM16 to a session; with server VAD, returns what the detector decided for each frame. */
  appendRealtimeAudio(sessionId: string, pcm16: Int16Array): ServerVadBatch | undefined {
    const vad = this.realtime.get(sessionId);
    if (vad === undefined) throw new InvalidRequestError(`no realtime session ${sessionId}`, 'session');
    return vad?.push(pcm16);
  }

  closeRealtimeSession(sessionId: string): void {
    this.realtime.delete(sessionId);
  }

  /** Prompt tokens of `prompt`, as `generate` will count them. */
  countPromptTokens(prompt: string): number {
    return this.tokenizer.encode(prompt).length;
  }

  /** Throws `InvalidRequestError` for a request `generate` would refuse; call it before committing a response. */
  validate(request: GenerateRequest): void {
    this.toPipelineRequest(request);
  }

  async *generate(request: GenerateRequest, options: GenerateOptions = {}): AsyncGenerator<PipelineOutput, void, undefined> {
    const pipelineRequest = this.toPipelineRequest(request);
    const wantsText = pipelineRequest.modalities.includes('text');
    const wantsAudio = pipelineRequest.modalities.includes('audio');
    const events = new RequestStream<PipelineEvent>();
    const endStream = (): void => events.close();
    options.signal?.addEventListener('abort', endStream, { once: true });
    let admitted = false;
    let text = '';
    try {
      if (options.signal?.aborted) return;
      admitted = true;
      this.open.set(request.requestId, events);
      this.orchestrator.addRequest(pipelineRequest, events);
      for await (const event of events) {
        if (event.kind === 'image') {
          yield this.imageOutput(request.requestId, event);
        } else if (event.kind === 'text') {
          const delta = this.tokenizer.decode(event.tokenIds, text.length > 0);
          text += delta;
          if (wantsText) yield this.textOutput(request.requestId, event, delta);
        } else if (wantsAudio) {
          yield this.audioOutput(request.requestId, event, text);
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', endStream);
      if (this.open.get(request.requestId) === events) this.open.delete(request.requestId);
      if (admitted) this.orchestrator.cleanupRequest(request.requestId);
    }
  }

  private toPipelineRequest(request: GenerateRequest): PipelineRequest {
    if (typeof request.requestId !== 'string' || request.requestId === '') throw new InvalidRequestError('requestId must be a non-empty string');
    const modalities = request.modalities ?? ['text'];
    const imageOnly = modalities.length === 1 && modalities[0] === 'image';
    if (!imageOnly && (modalities.length === 0 || modalities.some((m) => m !== 'text' && m !== 'audio'))) {
      throw new InvalidRequestError(`modalities must be ["image"] or a non-empty subset of ["text", "audio"]; got ${JSON.stringify(modalities)}`, 'modalities');
    }
    if (imageOnly !== (request.image !== undefined))
      throw new InvalidRequestError('an image request needs modalities ["image"] and an image spec', 'modalities');
    const promptTokenIds = this.tokenizer.encode(request.prompt);
    if (promptTokenIds.length === 0) throw new InvalidRequestError('the prompt is empty', 'messages');
    if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1) {
      throw new InvalidRequestError(`max_tokens must be a positive integer; got ${String(request.maxTokens)}`, 'max_tokens');
    }
    if (promptTokenIds.length + request.maxTokens > this.maxModelLen) {
      throw new InvalidRequestError(
        `This model's maximum context length is ${this.maxModelLen} tokens. However, you requested ` +
          `${promptTokenIds.length + request.maxTokens} tokens (${promptTokenIds.length} in the messages, ${request.maxTokens} in the completion).`,
        'max_tokens',
      );
    }
    return {
      requestId: request.requestId,
      arrivalTime: request.arrivalTime ?? Date.now() / 1000,
      promptTokenIds,
      maxTokens: request.maxTokens,
      modalities,
      voice: request.voice ?? 'alloy',
      image: request.image && { ...request.image, numInferenceSteps: request.image.numInferenceSteps ?? this.defaultInferenceSteps },
    };
  }

  private imageOutput(requestId: string, event: PipelineEvent): PipelineOutput {
    return {
      requestId,
      stageId: event.stageId,
      replicaId: event.replicaId,
      finalOutputType: 'image',
      finished: event.finished,
      finishReason: event.finishReason ?? null,
      multimodalOutput: { images: event.images ?? [] },
      stageMetrics: event.stageMetrics,
    };
  }

  private textOutput(requestId: string, event: PipelineEvent, delta: string): PipelineOutput {
    return {
      requestId,
      stageId: event.stageId,
      replicaId: event.replicaId,
      finalOutputType: 'text',
      finished: event.finished,
      finishReason: event.finishReason ?? null,
      multimodalOutput: null,
      stageMetrics: event.stageMetrics,
      text: delta,
    };
  }

  private audioOutput(requestId: string, event: PipelineEvent, transcript: string): PipelineOutput {
    return {
      requestId,
      stageId: event.stageId,
      replicaId: event.replicaId,
      finalOutputType: 'audio',
      finished: event.finished,
      finishReason: event.finishReason ?? null,
      multimodalOutput: { audio: event.audio ?? new Int16Array(0), sample_rate: AUDIO_SAMPLE_RATE },
      stageMetrics: event.stageMetrics,
      transcript: event.finished ? transcript : undefined,
    };
  }
}
