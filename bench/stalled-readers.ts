import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface StallOptions {
  /** Readers to open. */
  readonly count: number;
  /** Between one reader's connect and the next's; default 0 (all at once). Readers that arrive one by one each find a rendering of their own under way. */
  readonly staggerMillis?: number;
  /** Each reader's receive buffer (SO_RCVBUF); default 4096. */
  readonly receiveWindowBytes?: number;
}

/**
 * Readers that send `GET` and never read, in a Python process of their own (Node cannot shrink a
 * TCP socket's receive buffer; without that, loopback's buffers of megabytes would take in a
 * whole exposition and the reader would not stall at all). An `https:` URL makes them TLS readers.
 */
export class StalledReaders {
  private readonly child: ChildProcess;

  /** Starts the readers' process (starting a process holds the event loop for milliseconds: do it before measuring). */
  constructor(url: string, options: StallOptions) {
    const { protocol, hostname, port, pathname } = new URL(url);
    const args = [
      hostname,
      port,
      pathname,
      options.count,
      options.staggerMillis ?? 0,
      options.receiveWindowBytes ?? 4096,
      ...(protocol === 'https:' ? ['tls'] : []),
    ].map(String);
    this.child = spawn('python3', [join(__dirname, 'stalled-readers.py'), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  }

  /** Opens the readers; resolves once every one has sent its request. */
  open(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let out = '';
      this.child.stdout?.setEncoding('utf8').on('data', (text: string) => {
        out += text;
        if (out.includes('ready')) resolve();
      });
      this.child.once('error', reject);
      this.child.once('exit', (code) => reject(new Error(`stalled readers exited with ${String(code)} before they were ready`)));
      this.child.stdin?.write('go\n');
    });
  }

  /** Closes every reader's connection and ends the process. */
  close(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.stdin?.end();
    });
  }
}
