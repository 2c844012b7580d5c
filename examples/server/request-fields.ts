import { HttpError } from './http-error';

/** A 400 in OpenAI's shape, naming the offending field. */
export function invalid(message: string, param: string): HttpError {
  return new HttpError(400, message, 'invalid_request_error', param);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request's `model` (default the served one); another model is a 404, as in vLLM. */
export function requestedModel(body: Record<string, unknown>, servedModel: string): string {
  const model = body.model ?? servedModel;
  if (typeof model !== 'string') throw invalid('model must be a string', 'model');
  if (model !== servedModel) throw new HttpError(404, `The model \`${model}\` does not exist.`, 'NotFoundError', 'model');
  return model;
}
