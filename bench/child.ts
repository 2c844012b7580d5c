import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The line a contender process prints its result on; anything else on stdout is ignored. */
export const RESULT_MARKER = 'BENCH_RESULT ';

export interface ChildOptions {
  /** Run with `--expose-gc` (heap measurements). */
  readonly exposeGc?: boolean;
  /** More flags for the contender's Node (e.g. a young generation large enough to count allocations without a collection). */
  readonly nodeFlags?: readonly string[];
  /** Give up after this long (a hung contender must not hang the bench). Default 5 minutes. */
  readonly timeoutMillis?: number;
}

/**
 * Runs `bench/contenders/<entry>.ts` in a fresh Node process with `params` as its JSON argument,
 * and resolves with the JSON it prints: each contender gets its own process, so its call sites
 * never see another contender's shapes.
 */
export function runContender<T>(entry: string, params: unknown, options: ChildOptions = {}): Promise<T> {
  const file = join(__dirname, 'contenders', `${entry}.ts`);
  const args = [...(options.exposeGc === true ? ['--expose-gc'] : []), ...(options.nodeFlags ?? []), '--import', 'tsx', file, JSON.stringify(params)];
  return runNode<T>(args, options.timeoutMillis);
}

/** Runs `node <args>` and parses the marked result line of its stdout. */
export function runNode<T>(args: readonly string[], timeoutMillis = 300_000, cwd = join(__dirname, '..')): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMillis);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARKER));
      if (code !== 0 || line === undefined) {
        reject(new Error(`node ${args.slice(-2).join(' ')} exited with ${String(code)}\n${stderr.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(line.slice(RESULT_MARKER.length)) as T);
    });
  });
}
