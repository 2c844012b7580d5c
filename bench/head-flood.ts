import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** An order to the flood's process: `sockets` keep-alive connections, each sending `heads` HEADs of `url` back to back. */
export interface HeadFloodOrder {
  readonly url: string;
  readonly sockets: number;
  readonly heads: number;
}

/** What the flood saw: HEADs answered 200, those refused or cut, and the `Content-Length`s answered. */
export interface HeadFloodOutcome {
  readonly answered: number;
  readonly failed: number;
  readonly lengths: readonly number[];
}

/**
 * Clients that send HEAD after HEAD on many connections, in a process of their own (the host
 * process's memory is then the server's alone): what a monitoring probe misconfigured to hammer
 * `/metrics`, or an attacker with no credentials, sends.
 */
export class HeadFlood {
  private readonly child: ChildProcess = fork(join(__dirname, 'head-flood-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });

  run(order: HeadFloodOrder): Promise<HeadFloodOutcome> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`HEAD flood process exited with ${String(code)}`));
      this.child.once('message', (message: HeadFloodOutcome) => {
        this.child.off('exit', onExit);
        resolve(message);
      });
      this.child.once('exit', onExit);
      this.child.send(order);
    });
  }

  close(): void {
    this.child.kill();
  }
}
