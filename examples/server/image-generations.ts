import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AsyncOmni, GenerateRequest } from '../pipeline/async-omni';
import { HttpError } from './http-error';
import { generateForResponse } from './generate-for-response';
import { readJsonBody, sendJson } from './http-json';
import { parseImageGenerationRequest } from './image-request';

export interface ImageGenerationsOptions {
  readonly omni: AsyncOmni;
  readonly modelName: string;
}

/** Conditioning tokens the thinker generates for the image stage (its `max_tokens`). */
export const IMAGE_CONDITIONING_TOKENS = 16;

/**
 * `POST /v1/images/generations`: the thinker turns the prompt into conditioning tokens, the image
 * stage denoises and decodes, and the answer is OpenAI's `{ created, data: [{ b64_json }] }`. A
 * stage error answers 500; a client that leaves ends the request in the pipeline at once.
 */
export async function handleImageGenerations(request: IncomingMessage, response: ServerResponse, options: ImageGenerationsOptions): Promise<void> {
  const params = parseImageGenerationRequest(await readJsonBody(request), options.modelName);
  const generateRequest: GenerateRequest = {
    requestId: `img-${randomUUID().replace(/-/g, '')}`,
    prompt: params.prompt,
    maxTokens: IMAGE_CONDITIONING_TOKENS,
    modalities: ['image'],
    image: { width: params.width, height: params.height, n: params.n, numInferenceSteps: params.numInferenceSteps },
    arrivalTime: Date.now() / 1000,
  };
  options.omni.validate(generateRequest);
  const { outputs, disconnected, release } = generateForResponse(options.omni, generateRequest, response);
  try {
    let images: readonly Buffer[] | undefined;
    for await (const output of outputs) {
      if (output.finished) images = imagesOf(output.multimodalOutput?.images);
    }
    if (disconnected.aborted || response.destroyed) return;
    if (images === undefined) throw new HttpError(500, 'the pipeline ended the request without images');
    sendJson(response, 200, { created: Math.floor(Date.now() / 1000), data: images.map((png) => ({ b64_json: png.toString('base64') })) });
  } finally {
    release();
  }
}

function imagesOf(value: unknown): readonly Buffer[] | undefined {
  return Array.isArray(value) && value.every((item) => Buffer.isBuffer(item)) ? (value as Buffer[]) : undefined;
}
