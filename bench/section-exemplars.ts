import { EXEMPLAR_CONTENDERS, type ExemplarContender } from './exemplar-contenders';
import { ratioOf, type Measurement } from './measure';
import { printRow, printTitle } from './report';
import { contender, figure, interleave } from './rounds';

const LABELS: Readonly<Record<ExemplarContender, string>> = {
  'exemplars-off': 'exemplars off',
  'exemplars-untraced': 'exemplars on, no trace active',
  'exemplars-traced': 'exemplars on, every record traced',
};

/** One finished request's records (success counter + e2e histogram) with exemplars off and on. */
export async function exemplarSection(rounds: number, records: number) {
  const results = await interleave(
    EXEMPLAR_CONTENDERS.map((name) => contender(name, 'exemplar-record', { contender: name, records, blocks: 5 })),
    rounds,
  );
  const ns = (name: ExemplarContender): Measurement => figure(results, name, 'nsPerRequest');
  const off = ns('exemplars-off');
  printTitle('3b. One request recorded (success counter + e2e histogram), exemplars off and on (each contender in its own process)');
  for (const name of EXEMPLAR_CONTENDERS) {
    printRow(LABELS[name], ns(name), 'ns', name === 'exemplars-off' ? undefined : { to: 'off', ratio: ratioOf(ns(name), off) });
  }
  return {
    untraced: ratioOf(ns('exemplars-untraced'), off),
    traced: ratioOf(ns('exemplars-traced'), off),
    nsPerRequest: Object.fromEntries(EXEMPLAR_CONTENDERS.map((name) => [name, ns(name)])),
  };
}
