import { runContender, type ChildOptions } from './child';
import { summarize, type Measurement } from './measure';

/** One contender: a name and how to run it once in a fresh process. */
export interface ContenderSpec {
  readonly name: string;
  readonly run: () => Promise<Figures>;
}

/** A contender that is `bench/contenders/<entry>.ts` run with `params`. */
export function contender(name: string, entry: string, params: unknown, options: ChildOptions = {}): ContenderSpec {
  return { name, run: () => runContender<Figures>(entry, params, options) };
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
      const figures = await spec.run();
      collected.get(spec.name)?.push(figures);
      process.stderr.write('.');
    }
  }
  process.stderr.write('\n');
  const results = new Map<string, Record<string, Measurement>>();
  for (const [name, runs] of collected) {
    const figureNames = Object.keys(runs[0] ?? {});
    results.set(
      name,
      Object.fromEntries(
        figureNames.map((figure) => [
          figure,
          summarize(
            `${name}: ${figure}`,
            runs.map((r) => r[figure] ?? NaN),
          ),
        ]),
      ),
    );
  }
  return results;
}

/** One figure of one contender, or a clear error naming what is missing. */
export function figure(results: RoundResults, contender: string, name: string): Measurement {
  const found = results.get(contender)?.[name];
  if (found === undefined) throw new Error(`no figure ${name} for ${contender}`);
  return found;
}
