import type { ServerResponse } from 'node:http';
import type { AsyncOmni, GenerateRequest, PipelineOutput } from '../pipeline/async-omni';

export interface ResponseGeneration {
  readonly outputs: AsyncGenerator<PipelineOutput, void, undefined>;
  /** Aborted when the client went away before the response ended. */
  readonly disconnected: AbortSignal;
  /** Stops watching the response; call once the response is written. */
  release(): void;
}

/**
 * Runs `omni.generate` for one HTTP response. When the client goes away first, the consumer leaves
 * the stream (`return()`, which is what a disconnect is to the serving layer) and the abort signal
 * ends the request in the pipeline at once, so nothing is generated for nobody.
 */
export function generateForResponse(omni: AsyncOmni, request: GenerateRequest, response: ServerResponse): ResponseGeneration {
  const disconnect = new AbortController();
  const outputs = omni.generate(request, { signal: disconnect.signal });
  const onClose = (): void => {
    if (response.writableEnded) return;
    void outputs.return(undefined);
    disconnect.abort();
  };
  response.on('close', onClose);
  return { outputs, disconnected: disconnect.signal, release: () => response.off('close', onClose) };
}
