/**
 * Instructions per request and per idle call of this tree and, optionally, another checkout side by side
 * (`npx tsx bench/count-instructions.ts [<other-root>]`; both trees built, the other with this
 * tree's bench copied in). Needs valgrind.
 */
import { join } from 'node:path';
import { countInstructions, valgrindAvailable, type InstructionCounts } from './section-instructions';

function line(name: string, counts: InstructionCounts): string {
  const { host, ours, floor } = counts.perRequest;
  const over = (n: number): string =>
    Math.round(n - host)
      .toLocaleString('en')
      .padStart(12);
  const { direct, 'idle-wrapper': idle } = counts.perCall;
  return (
    `${name.padEnd(8)} host ${Math.round(host).toLocaleString('en').padStart(10)}  ours over host ${over(ours)}  floor over host ${over(floor)}  ours vs floor ×${counts.oursVsFloor.toFixed(2)}` +
    `  idle call ${idle.toFixed(1)} vs bare ${direct.toFixed(1)} (×${counts.idleWrapperVsDirect.toFixed(2)})`
  );
}

(async () => {
  if (!valgrindAvailable()) throw new Error('valgrind is not installed (Debian package valgrind)');
  const [other] = process.argv.slice(2);
  const after = await countInstructions(join(__dirname, '..'));
  if (other !== undefined) {
    const before = await countInstructions(other);
    console.log(line('before', before));
    console.log(
      `${line('after', after)}  (ours after/before ×${((after.perRequest.ours - after.perRequest.host) / (before.perRequest.ours - before.perRequest.host)).toFixed(2)})`,
    );
  } else console.log(line('this', after));
})();
