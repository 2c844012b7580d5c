import { HttpError } from './http-error';
import { invalid, isRecord, requestedModel } from './request-fields';

/** A validated `POST /v1/images/generations` body, reduced to what the image stage serves. */
export interface ImageGenerationParams {
  readonly model: string;
  readonly prompt: string;
  readonly n: number;
  readonly width: number;
  readonly height: number;
  /** vLLM-Omni's extra parameter; undefined lets the stage use its default. */
  readonly numInferenceSteps: number | undefined;
}

/** OpenAI accepts 1 to 10 images per request. */
const MAX_IMAGES = 10;
const MIN_SIDE = 64;
const MAX_SIDE = 2048;
const MAX_INFERENCE_STEPS = 200;
const DEFAULT_SIZE = '1024x1024';

/**
 * Checks an image request as the OpenAI API does for the fields this server supports, and refuses
 * (400) what it cannot honour rather than ignoring it: `response_format: "url"` (the server keeps
 * no files to link to), output formats other than PNG, sizes that are not `WIDTHxHEIGHT`. A
 * different `model` is a 404, as in vLLM.
 */
export function parseImageGenerationRequest(body: unknown, servedModel: string): ImageGenerationParams {
  if (!isRecord(body)) throw new HttpError(400, 'request body must be a JSON object');
  const model = requestedModel(body, servedModel);
  if (typeof body.prompt !== 'string' || body.prompt.trim() === '') throw invalid('prompt must be a non-empty string', 'prompt');

  const n = integerIn(body.n, 'n', 1, MAX_IMAGES) ?? 1;
  if (body.response_format !== undefined && body.response_format !== null && body.response_format !== 'b64_json') {
    throw invalid(`response_format ${JSON.stringify(body.response_format)} is not supported; use "b64_json"`, 'response_format');
  }
  if (body.output_format !== undefined && body.output_format !== null && body.output_format !== 'png') {
    throw invalid(`output_format ${JSON.stringify(body.output_format)} is not supported; use "png"`, 'output_format');
  }
  const { width, height } = parseSize(body.size ?? DEFAULT_SIZE);
  const numInferenceSteps = integerIn(body.num_inference_steps, 'num_inference_steps', 1, MAX_INFERENCE_STEPS);
  return { model, prompt: body.prompt, n, width, height, numInferenceSteps };
}

function parseSize(value: unknown): { width: number; height: number } {
  const match = typeof value === 'string' ? /^(\d{1,5})x(\d{1,5})$/.exec(value) : null;
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (match === null || [width, height].some((side) => side < MIN_SIDE || side > MAX_SIDE)) {
    throw invalid(`size must be "WIDTHxHEIGHT" with sides from ${MIN_SIDE} to ${MAX_SIDE}; got ${JSON.stringify(value)}`, 'size');
  }
  return { width, height };
}

function integerIn(value: unknown, param: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${param} must be an integer from ${min} to ${max}`, param);
  }
  return value;
}
