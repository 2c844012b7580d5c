import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** A request to the scraper process: `count` GETs of `url` at once. */
export interface ScrapeOrder {
  readonly url: string;
  readonly gzip: boolean;
  readonly count: number;
}

/**
 * Scrapers in a process of their own, as Prometheus is: the host process only serves, so its
 * event-loop block, wall time and memory are the server's, not those of clients reading tens of
 * megabytes beside it.
 */
export class RemoteScrapers {
  private readonly child: ChildProcess = fork(join(__dirname, 'scraper-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });

  /** Resolves with each response's length on the wire, once all have arrived. */
  scrape(order: ScrapeOrder): Promise<number[]> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown): void => {
        this.child.off('exit', onExit);
        if (Array.isArray(message)) resolve(message as number[]);
        else reject(new Error(`scraper process: ${String((message as { error?: unknown }).error)}`));
      };
      const onExit = (code: number | null): void => reject(new Error(`scraper process exited with ${String(code)}`));
      this.child.once('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(order);
    });
  }

  close(): void {
    this.child.kill();
  }
}
