/**
 * Instructions per request and per idle call of this tree and, optionally, another checkout side by side
 * (`npx tsx bench/count-instructions.ts [<other-root>]`; both trees built, the other with this
 * tree's bench copied in). Needs valgrind.
 *
 * With `--kinds <tokens>`, the per-request counts instead, taken apart by kind (the program, V8's
 * collector, V8's compilers) with `<tokens>` generated per stage, over requests 6 001–7 000:
 * `--kinds 2` leaves a request's fixed costs (admission, stream, submissions, first and last
 * polls, transfers, cleanup), and the difference from `--kinds 100` is 294 decode polls.
 */
import { join } from 'node:path';
import type { InstructionKinds } from './instruction-kinds';
import { countInstructionKinds, countInstructions, valgrindAvailable, type InstructionCounts } from './section-instructions';

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

function kindsLine(name: string, kinds: Record<'host' | 'ours' | 'floor', InstructionKinds>): string {
  const over = (contender: 'ours' | 'floor', key: keyof InstructionKinds): string =>
    Math.round(kinds[contender][key] - kinds.host[key])
      .toLocaleString('en')
      .padStart(10);
  const ratio = (key: keyof InstructionKinds): string => ((kinds.ours[key] - kinds.host[key]) / (kinds.floor[key] - kinds.host[key])).toFixed(2);
  return (
    `${name.padEnd(8)} over host: program ours ${over('ours', 'program')} floor ${over('floor', 'program')} (×${ratio('program')})` +
    `  collector ours ${over('ours', 'collector')} floor ${over('floor', 'collector')}  compilers ours ${over('ours', 'compiler')} floor ${over('floor', 'compiler')}` +
    `  total ×${ratio('total')}`
  );
}

(async () => {
  if (!valgrindAvailable()) throw new Error('valgrind is not installed (Debian package valgrind)');
  const args = process.argv.slice(2);
  const kindsAt = args.indexOf('--kinds');
  if (kindsAt >= 0) {
    const tokens = Number(args[kindsAt + 1]);
    if (!Number.isInteger(tokens) || tokens < 1) throw new RangeError('--kinds takes the tokens per stage, a positive integer');
    args.splice(kindsAt, 2);
    const [other] = args;
    if (other !== undefined) console.log(kindsLine('before', await countInstructionKinds(other, tokens)));
    console.log(kindsLine(other === undefined ? 'this' : 'after', await countInstructionKinds(join(__dirname, '..'), tokens)));
    return;
  }
  const [other] = args;
  const after = await countInstructions(join(__dirname, '..'));
  if (other !== undefined) {
    const before = await countInstructions(other);
    console.log(line('before', before));
    console.log(
      `${line('after', after)}  (ours after/before ×${((after.perRequest.ours - after.perRequest.host) / (before.perRequest.ours - before.perRequest.host)).toFixed(2)})`,
    );
  } else console.log(line('this', after));
})();
