import { COLD_START_CONTENDERS, registerScript, requireScript, runColdStart } from './cold-start';
import { ratioOf } from './measure';
import { printRow, printTitle } from './report';
import { figure, interleave } from './rounds';

const LABELS = { ours: 'omni-otel-metrics (dist)', 'prom-client': 'prom-client', sdk: 'sdk-metrics + exporter-prometheus' } as const;

/** `require`, registration at 3 × each of `sizes` and the first scrape, each in a fresh process. */
export async function coldStartSection(rounds: number, sizes: readonly number[]) {
  const requires = await interleave(
    COLD_START_CONTENDERS.map((name) => ({ name, run: () => runColdStart(requireScript(name)) })),
    rounds,
  );
  printTitle('6. Cold start');
  for (const name of COLD_START_CONTENDERS) {
    const value = figure(requires, name, 'requireNs');
    printRow(
      `require: ${LABELS[name]}`,
      value,
      'ns',
      name === 'ours' ? undefined : { to: 'ours', ratio: ratioOf(figure(requires, 'ours', 'requireNs'), value) },
    );
  }
  const registrations: Record<number, unknown> = {};
  for (const replicas of sizes) {
    const results = await interleave(
      COLD_START_CONTENDERS.map((name) => ({ name, run: () => runColdStart(registerScript(name, replicas)) })),
      rounds,
    );
    for (const name of COLD_START_CONTENDERS) {
      printRow(`register, 3 × ${replicas}: ${LABELS[name]}`, figure(results, name, 'registerNs'), 'ns');
      printRow(`first scrape, 3 × ${replicas}: ${LABELS[name]}`, figure(results, name, 'firstScrapeNs'), 'ns');
    }
    registrations[replicas] = Object.fromEntries(results);
  }
  return { require: Object.fromEntries(requires), registrations };
}
