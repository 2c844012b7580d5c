import { ratioOf } from './measure';
import { printRow, printTitle } from './report';
import { contender, figure, interleave } from './rounds';

const KINDS = ['counter', 'gauge', 'histogram'] as const;

/** Heap bytes per series created and populated, by kind, ours against prom-client, each in its own process. */
export async function memorySection(rounds: number, series: number) {
  const specs = KINDS.flatMap((kind) =>
    (['ours', 'prom-client'] as const).map((name) => contender(`${name} ${kind}`, 'memory', { contender: name, kind, series }, { exposeGc: true })),
  );
  const results = await interleave(specs, rounds);
  printTitle(`5. Heap per series, ${series} series created and populated (histograms: 22 buckets)`);
  return Object.fromEntries(
    KINDS.map((kind) => {
      const ours = figure(results, `ours ${kind}`, 'bytesPerSeries');
      const prom = figure(results, `prom-client ${kind}`, 'bytesPerSeries');
      printRow(`omni-otel-metrics ${kind}`, ours, 'bytes', { to: 'prom-client', ratio: ratioOf(ours, prom) });
      printRow(`prom-client ${kind}`, prom, 'bytes');
      return [kind, { ours, promClient: prom, ratio: ratioOf(ours, prom) }];
    }),
  );
}
