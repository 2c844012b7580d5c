import { RESULT_MARKER } from '../child';

/**
 * The body of a contender process: parses its JSON argument, runs `job`, prints the result on the
 * marked line and exits (servers, timers or sockets a contender left behind end with it).
 */
export function contenderMain<P, R>(job: (params: P) => Promise<R>): void {
  const params = JSON.parse(process.argv[2] ?? '{}') as P;
  job(params).then(
    (result) => {
      process.stdout.write(`${RESULT_MARKER}${JSON.stringify(result)}\n`, () => process.exit(0));
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** The value of `--expose-gc`'s `gc`, or a clear error when the process was started without it. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  gc();
  gc();
}
