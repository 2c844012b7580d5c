import { runContender } from './child';
import { summarize, type Measurement } from './measure';

/** One contender: an entry under bench/contenders/ and the parameters it is run with. */
export interface ContenderSpec {
  readonly name: string;
  readonly entry: string;
  readonly params: unknown;
  readonly exposeGc?: boolean;
}

/** What one contender process reports: named figures (nanoseconds, bytes, …). */
export type Figures = Readonly<Record<string, number>>;

/** Per contender, per figure: the value of every round, in round order, with median and range. */
export type RoundResults = ReadonlyMap<string, Readonly<Record<string, Measurement>>>;

/**
 * Runs every contender once per round, each time in a fresh process, interleaved (A B, then B A,
 * …) so that drift on a shared machine hits all of them alike; ratios are then taken round by
 * round (`ratioOf`), never between medians measured at different times.
 */
export async function interleave(specs: readonly ContenderSpec[], rounds: number): Promise<RoundResults> {
  const collected = new Map<string, Figures[]>(specs.map((spec) => [spec.name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? specs : [...specs].reverse();
    for (const spec of order) {
      const figures = await runContender<Figures>(spec.entry, spec.params, { exposeGc: spec.exposeGc ?? false });
      collected.get(spec.name)?.push(figures);
      process.stderr.write('.');
    }
  }
  process.stderr.write('\n');
  const results = new Map<string, Record<string, Measurement>>();
  for (const [name, runs] of collected) {
    const figureNames = Object.keys(runs[0] ?? {});
    results.set(name, Object.fromEntries(figureNames.map((figure) => [figure, summarize(`${name}: ${figure}`, runs.map((r) => r[figure] ?? NaN))])));
  }
  return results;
}

/** One figure of one contender, or a clear error naming what is missing. */
export function figure(results: RoundResults, contender: string, name: string): Measurement {
  const found = results.get(contender)?.[name];
  if (found === undefined) throw new Error(`no figure ${name} for ${contender}`);
  return found;
}
