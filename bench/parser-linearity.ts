/**
 * How long the engine-pull exposition parser takes on pathological input, and that the time grows
 * at most linearly with it: `npx tsx bench/parser-linearity.ts`. Each input is parsed at n and 4n
 * characters; a linear parser takes about 4× as long for the second (less when it refuses at a
 * fixed bound), a quadratic one 16×. The tests
 * check what the parser answers on the same inputs (`test/engine-pull/exposition-parser-bounds.test.ts`);
 * the times are here, where a loaded machine cannot fail a test run.
 */
import { performance } from 'node:perf_hooks';
import { parseExposition } from '../exporters/engine-pull/exposition-parser';

/** Pathological inputs of about `n` characters: long runs of one token where a parser could backtrack. */
const INPUTS: ReadonlyArray<[string, (n: number) => string]> = [
  ['a value of n digits and one bad character', (n) => `a ${'1'.repeat(n)}x\n`],
  ['a value of n digits with a dot and one bad character', (n) => `a 1.${'1'.repeat(n)}e\n`],
  ['an le of n digits and one bad character', (n) => `# TYPE h histogram\nh_bucket{le="${'1'.repeat(n)}x"} 1\n`],
  ['a label value of n characters', (n) => `a{x="${'y'.repeat(n)}"} 1\n`],
  ['a metric name of n characters', (n) => `${'a'.repeat(n)} 1\n`],
  ['n blanks before the value', (n) => `a${' '.repeat(n)}1x\n`],
  ['a HELP of n escapes', (n) => `# HELP a ${'\\\\'.repeat(n / 2)}\n`],
  ['a TYPE line of n blanks', (n) => `# TYPE a${' '.repeat(n)}\n`],
  ['n characters of distinct samples', (n) => Array.from({ length: n / 16 }, (_, i) => `a{x="${i}"} 1\n`).join('')],
  ['n lines of blanks and comments', (n) => '#  \n'.repeat(n / 4)],
];

/** The fastest of `repeats` parses, in milliseconds (the fastest is the one least disturbed by the machine). */
function fastestParse(text: string, repeats = 5): number {
  let fastest = Infinity;
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    try {
      parseExposition(text);
    } catch {
      // Refused: how long the refusal took is the figure.
    }
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}

const SMALL = 200_000;
console.log(`exposition parser, pathological inputs: fastest of 5 parses at ${SMALL.toLocaleString('en')} and ${(4 * SMALL).toLocaleString('en')} characters`);
for (const [what, make] of INPUTS) {
  const small = fastestParse(make(SMALL));
  const large = fastestParse(make(4 * SMALL));
  console.log(
    `  ${what.padEnd(54)} ${small.toFixed(2).padStart(8)} ms  ${large.toFixed(2).padStart(8)} ms  ×${(large / small).toFixed(1)} (linear: about ×4; quadratic: ×16)`,
  );
}
