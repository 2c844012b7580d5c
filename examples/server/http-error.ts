/** An error the API answers with its own status, in OpenAI's error shape. */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    message: string,
    /** OpenAI's `error.type`, e.g. `invalid_request_error`. */
    readonly type: string = status >= 500 ? 'server_error' : 'invalid_request_error',
    readonly param: string | null = null,
  ) {
    super(message);
  }
}
