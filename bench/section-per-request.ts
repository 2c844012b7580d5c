import { runContender } from './child';
import type { SampleComparison } from './direct-path/same-samples';
import { ratioOf, summarize } from './measure';
import type { PerRequestContender } from './per-request-setup';
import { printRow, printTitle } from './report';
import { contender, figure, interleave } from './rounds';

const LABELS: Readonly<Record<PerRequestContender, string>> = {
  host: 'host alone (no metrics)',
  ours: 'omni-otel-metrics hooks',
  'ours-traced': 'the same, exemplars on, every request traced',
  'ours-slo': 'the same, with slo (every request judged, goodput counted)',
  'prom-client': 'direct path into prom-client children',
  floor: 'direct path into plain cells (floor)',
};

/** Per-request cost over the host alone: the package's hooks, prom-client by hand, the floor. */
export async function perRequestSection(rounds: number, requests: number) {
  const check = await runContender<{ floor: SampleComparison; promClient: SampleComparison }>('per-request-check', {});
  const specs = (Object.keys(LABELS) as PerRequestContender[]).map((name) => contender(name, 'per-request', { contender: name, requests, blocks: 10 }));
  const results = await interleave(specs, rounds);
  const m = (name: PerRequestContender) => figure(results, name, 'nsPerRequest');
  const host = m('host');
  // Each contender's cost over the host, round by round (the host ran in the same round).
  const over = (name: PerRequestContender) =>
    summarize(
      name,
      m(name).rounds.map((ns, i) => ns - (host.rounds[i] ?? NaN)),
    );
  const overFloor = over('floor');
  printTitle(
    `1. One request, 3 stages × 4 replicas, 100 tokens per stage (floor and prom-client checked to record the package's samples: ${check.floor.compared} compared, ${check.floor.differences.length + check.promClient.differences.length} differ)`,
  );
  const summaries = (Object.keys(LABELS) as PerRequestContender[]).map((name) => {
    const cost = name === 'host' ? host : over(name);
    printRow(
      `${LABELS[name]}${name === 'host' ? '' : ', over the host'}`,
      cost,
      'ns',
      name === 'host' || name === 'floor'
        ? undefined
        : name === 'ours-traced' || name === 'ours-slo'
          ? { to: 'ours', ratio: ratioOf(cost, over('ours')) }
          : { to: 'floor', ratio: ratioOf(cost, overFloor) },
    );
    return [name, cost] as const;
  });
  return {
    check,
    costs: Object.fromEntries(summaries),
    oursVsFloor: ratioOf(over('ours'), overFloor),
    tracedVsOurs: ratioOf(over('ours-traced'), over('ours')),
    sloVsOurs: ratioOf(over('ours-slo'), over('ours')),
  };
}
