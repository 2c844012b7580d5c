import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AsyncOmni, GenerateRequest, PipelineOutput } from '../pipeline/async-omni';
import { InvalidRequestError } from '../pipeline/invalid-request-error';
import { THINKER_STAGE } from '../pipeline/pipeline-types';
import { renderChatPrompt } from './chat-prompt';
import { parseChatCompletionRequest, type ChatCompletionParams } from './chat-request';
import { audioPart, chunkBody, completionBody, usageChunkBody, usageOf, type CompletionIdentity, type Usage } from './chat-responses';
import { HttpError } from './http-error';
import { errorBody, readJsonBody, sendJson } from './http-json';
import { toHttpError } from './api-errors';
import { generateForResponse } from './generate-for-response';
import { SseWriter } from './sse-writer';

export interface ChatCompletionsOptions {
  readonly omni: AsyncOmni;
  readonly modelName: string;
  /** `max_tokens` when the request sets none (capped by what the context leaves). */
  readonly defaultMaxTokens: number;
}

/**
 * `POST /v1/chat/completions`: validates, then runs `omni.generate` and writes its outputs as SSE
 * chunks (`stream: true`) or one `chat.completion`. When the client disconnects first, the abort
 * signal ends the generator at once and the loop leaves it (`return()`), so the pipeline drops the
 * request instead of generating for nobody.
 */
export async function handleChatCompletions(request: IncomingMessage, response: ServerResponse, options: ChatCompletionsOptions): Promise<void> {
  const params = parseChatCompletionRequest(await readJsonBody(request), options.modelName);
  const prompt = renderChatPrompt(params.messages);
  const promptTokens = options.omni.countPromptTokens(prompt);
  const maxTokens = params.maxTokens ?? Math.max(1, Math.min(options.defaultMaxTokens, options.omni.maxModelLen - promptTokens));
  const id = `chatcmpl-${randomUUID().replace(/-/g, '')}`;
  const generateRequest: GenerateRequest = {
    requestId: id,
    prompt,
    maxTokens,
    modalities: params.modalities,
    voice: params.voice,
    arrivalTime: Date.now() / 1000,
    user: params.user,
    headers: request.headers,
  };
  try {
    options.omni.validate(generateRequest);
  } catch (error) {
    if (error instanceof InvalidRequestError) throw new HttpError(400, error.message, 'invalid_request_error', error.param);
    throw error;
  }

  const identity: CompletionIdentity = { id, created: Math.floor(Date.now() / 1000), model: options.modelName, audioId: `audio_${id.slice(9)}` };
  const { outputs, disconnected, release } = generateForResponse(options.omni, generateRequest, response);
  try {
    if (params.stream) await streamResponse(response, outputs, params, identity, promptTokens, disconnected);
    else await completeResponse(response, outputs, params, identity, promptTokens, disconnected);
  } finally {
    release();
  }
}

async function streamResponse(
  response: ServerResponse,
  outputs: AsyncIterable<PipelineOutput>,
  params: ChatCompletionParams,
  identity: CompletionIdentity,
  promptTokens: number,
  disconnected: AbortSignal,
): Promise<void> {
  const sse = new SseWriter(response);
  sse.open();
  await sse.send(chunkBody(identity, { role: 'assistant', content: '' }));
  let usage: Usage | undefined;
  try {
    for await (const output of outputs) {
      if (disconnected.aborted || sse.closed) break;
      const delta = deltaOf(output, identity);
      if (delta !== undefined && !(await sse.send(chunkBody(identity, delta)))) break;
      if (output.finished) {
        await sse.send(chunkBody(identity, {}, output.finishReason ?? 'stop'));
        usage = usageOf(promptTokens, completionTokens(output));
      }
    }
  } catch (error) {
    // Headers are out: the error travels as an event, as vLLM does.
    await sse.send(errorBody(toHttpError(error)));
  }
  if (sse.closed) return;
  if (usage !== undefined && params.includeUsage) await sse.send(usageChunkBody(identity, usage));
  await sse.done();
}

async function completeResponse(
  response: ServerResponse,
  outputs: AsyncIterable<PipelineOutput>,
  params: ChatCompletionParams,
  identity: CompletionIdentity,
  promptTokens: number,
  disconnected: AbortSignal,
): Promise<void> {
  let text = '';
  let transcript = '';
  const audio: Int16Array[] = [];
  let last: PipelineOutput | undefined;
  for await (const output of outputs) {
    if (disconnected.aborted) break;
    text += output.text ?? '';
    const chunk = audioChunkOf(output);
    if (chunk !== undefined && chunk.length > 0) audio.push(chunk);
    if (output.transcript !== undefined) transcript = output.transcript;
    last = output;
  }
  if (disconnected.aborted || response.destroyed) return;
  if (last === undefined || !last.finished) throw new HttpError(500, 'the pipeline ended the request without a final output');
  const wantsAudio = params.modalities.includes('audio');
  const message = {
    content: params.modalities.includes('text') ? text : null,
    ...(wantsAudio ? { audio: audioPart(identity, audio, transcript || text) } : {}),
  };
  sendJson(response, 200, completionBody(identity, message, last.finishReason ?? 'stop', usageOf(promptTokens, completionTokens(last))));
}

function deltaOf(output: PipelineOutput, identity: CompletionIdentity): { content?: string; audio?: ReturnType<typeof audioPart> } | undefined {
  if (output.finalOutputType === 'text') return output.text ? { content: output.text } : undefined;
  const chunk = audioChunkOf(output);
  if (chunk === undefined || chunk.length === 0) return undefined;
  return { audio: audioPart(identity, [chunk], '') };
}

function audioChunkOf(output: PipelineOutput): Int16Array | undefined {
  const audio = output.multimodalOutput?.audio;
  return audio instanceof Int16Array ? audio : undefined;
}

/** The thinker's generated tokens: what OpenAI bills as completion tokens. */
function completionTokens(output: PipelineOutput): number {
  return output.stageMetrics?.find((m) => m.stageId === THINKER_STAGE)?.numTokensOut ?? 0;
}
