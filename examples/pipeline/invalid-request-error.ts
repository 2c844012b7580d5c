/** A request the pipeline cannot serve as asked (the serving layer answers 400 with `param`). */
export class InvalidRequestError extends Error {
  override readonly name = 'InvalidRequestError';

  constructor(
    message: string,
    /** The offending request field, OpenAI style (`max_tokens`, `messages`, ...). */
    readonly param: string | null = null,
  ) {
    super(message);
  }
}
