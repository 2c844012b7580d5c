import { ratioOf } from './measure';
import { printRow, printTitle } from './report';
import { contender, figure, interleave } from './rounds';

/** One inter-token-latency observe into one bound series: ours, prom-client, a Float64Array. */
export async function interTokenSection(rounds: number, observations: number) {
  const names = ['ours', 'prom-client', 'floor'] as const;
  const results = await interleave(
    names.map((name) => contender(name, 'inter-token', { contender: name, observations, blocks: 5 })),
    rounds,
  );
  const floor = figure(results, 'floor', 'nsPerObservation');
  printTitle('2. One inter-token-latency observation into a bound histogram series');
  const m = Object.fromEntries(
    names.map((name) => {
      const value = figure(results, name, 'nsPerObservation');
      printRow(
        name === 'floor' ? 'Float64Array histogram (floor)' : name,
        value,
        'ns',
        name === 'floor' ? undefined : { to: 'floor', ratio: ratioOf(value, floor) },
      );
      return [name, value];
    }),
  );
  return m;
}
