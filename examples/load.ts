/**
 * Load generator for the reference pipeline (or any OpenAI-compatible chat and images server):
 * `npm run load -- --requests 200 --concurrency 16 [--base-url URL] [--audio-ratio 0.5] [--image-ratio 0.1]
 * [--stream-ratio 0.7] [--disconnect-ratio 0.1] [--seed S]`; with `SLO_*` variables set (those of
 * `npm start`), the goodput the client saw too. Progress goes to stderr, the summary to stdout.
 * `runLoad` is the same run as a function (tests call it in-process).
 */
import { formatProgress, formatSummary } from './load/format-summary';
import { LOAD_USAGE, parseLoadArgs, type LoadOptions } from './load/load-options';
import { runLoad } from './load/run-load';
import { sloFromEnv } from './slo-env';

export { runLoad } from './load/run-load';
export type { LoadSummary, RequestResult, RequestOutcome, LoadProgress, RunLoadHooks } from './load/run-load';
export { parseLoadArgs, DEFAULT_LOAD_OPTIONS } from './load/load-options';
export type { LoadOptions } from './load/load-options';
export { formatSummary } from './load/format-summary';
export type { GoodputSummary } from './load/goodput-summary';

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(LOAD_USAGE);
    return;
  }
  let options: LoadOptions;
  try {
    options = { ...parseLoadArgs(argv), slo: sloFromEnv(process.env) };
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 2;
    return;
  }
  const tty = process.stderr.isTTY === true;
  // On a terminal one line is rewritten; in a log, a line per 10 % keeps it readable.
  const step = Math.max(1, Math.ceil(options.requests / 10));
  const summary = await runLoad(options, {
    onProgress: (progress) => {
      if (tty) process.stderr.write(`\r${formatProgress(progress)}`);
      else if (progress.done % step === 0 || progress.done === progress.total) process.stderr.write(`${formatProgress(progress)}\n`);
    },
  });
  if (tty) process.stderr.write('\n');
  console.log(formatSummary(summary));
  if (summary.outcomes.error > 0) process.exitCode = 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
