import type { ServerResponse } from 'node:http';

/**
 * Server-sent events as the OpenAI streaming API writes them: `data: <json>\n\n` per chunk and a
 * final `data: [DONE]`. Writes wait for `drain` so a slow client slows the request, not the heap.
 */
export class SseWriter {
  constructor(private readonly response: ServerResponse) {}

  /** The client is gone (or the response ended); nothing more can be delivered. */
  get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  open(): void {
    this.response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    this.response.flushHeaders();
  }

  /** Sends one event; false when the client is gone. */
  async send(data: unknown): Promise<boolean> {
    return this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  async done(): Promise<void> {
    if (await this.write('data: [DONE]\n\n')) this.response.end();
  }

  private async write(text: string): Promise<boolean> {
    if (this.closed) return false;
    if (this.response.write(text)) return true;
    await new Promise<void>((resolve) => {
      const settle = (): void => {
        this.response.off('drain', settle);
        this.response.off('close', settle);
        resolve();
      };
      this.response.on('drain', settle);
      this.response.on('close', settle);
    });
    return !this.closed;
  }
}
