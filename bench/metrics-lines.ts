/**
 * Lines of `/metrics` for the reference pipeline (pools 1,2,1) after the same 40-request load,
 * with `logStats` off and on: the numbers of docs/exposition.md. Run: `npx tsx bench/metrics-lines.ts`;
 * `--write docs/exposition.md` also rewrites the sentence between the file's `metrics-lines` markers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { runLoad } from '../examples/load';
import { startReferencePipeline } from '../examples/reference-pipeline';

async function linesAfterLoad(logStats: boolean): Promise<number> {
  const pipeline = await startReferencePipeline({
    host: '127.0.0.1',
    port: 0,
    metricsPort: 0,
    replicas: [1, 2, 1],
    profile: 'fast',
    logStats,
    logIntervalSeconds: 0,
    logSink: { info: () => undefined },
  });
  try {
    await runLoad({ baseUrl: `${pipeline.apiUrl}/v1`, requests: 40, concurrency: 8, seed: 1 });
    const body = await (await fetch(pipeline.metricsUrl)).text();
    return body.split('\n').length - 1;
  } finally {
    await pipeline.stop();
  }
}

async function main(): Promise<void> {
  const off = await linesAfterLoad(false);
  const on = await linesAfterLoad(true);
  console.log(`/metrics lines after 40 requests, pools [1,2,1]: logStats off ${off}, on ${on}`);
  const target = process.argv[process.argv.indexOf('--write') + 1];
  if (process.argv.includes('--write') && target !== undefined) writeCounts(target, off, on);
}

/** Replaces the counts between `<!-- metrics-lines -->` and `<!-- /metrics-lines -->` in `file`. */
export function writeCounts(file: string, off: number, on: number): void {
  const text = readFileSync(file, 'utf8');
  const marked = /<!-- metrics-lines -->[^]*?<!-- \/metrics-lines -->/;
  if (!marked.test(text)) throw new Error(`${file} has no <!-- metrics-lines --> … <!-- /metrics-lines --> markers`);
  writeFileSync(file, text.replace(marked, `<!-- metrics-lines -->**${off} lines with \`logStats\` off and ${on} with it on**<!-- /metrics-lines -->`));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
