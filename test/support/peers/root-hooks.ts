/**
 * Mocha root hook (loaded by .mocharc.json): before the first test of a run (of each file, in a
 * worker of `mocha --parallel`), looks for every peer the test files loaded since asked for
 * (`needPeer`) and prints one line for those it found. A test run builds
 * nothing unless asked to (`OMNI_PEERS_BUILD=1`; `npm run peers` builds them all beforehand). The
 * suites a missing peer skips are named once each, in one line per set of missing peers with what
 * gets each peer and how long that takes; under CI (`CI=true`) a missing peer fails the run once,
 * before any test, instead.
 */
import { recordOutcome, takeWantedPeers } from './need-peer';
import { peerRemedy, peerTitle, provisionPeer, type PeerName } from './provision';

const required = (): boolean => process.env.CI === 'true';
/** Peers this process said it found: said once per process, not once per file. */
const announced = new Set<PeerName>();
const build = (): boolean => process.env.OMNI_PEERS_BUILD === '1';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    const wanted = takeWantedPeers();
    if (wanted.size === 0) return;
    if (build()) this.timeout(0); // A first build of Prometheus takes minutes; every later run finds it cached.
    const reasons = new Map<PeerName, string>();
    const ready: string[] = [];
    const started = performance.now();
    for (const [name, suites] of wanted) {
      const outcome = await provisionPeer(name, { build: build(), progress: (line) => console.log(`  peers: ${line}`) });
      recordOutcome(name, outcome, suites);
      if (outcome.ok) {
        if (outcome.built) console.log(`  peers: built or installed ${peerTitle(name)} in ${outcome.seconds.toFixed(0)} s`);
        if (!announced.has(name)) ready.push(`${name} ${outcome.paths.version}`);
        announced.add(name);
      } else reasons.set(name, outcome.reason);
    }
    if (ready.length > 0) console.log(`  peers: ${ready.join(', ')} ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const lines = skippedSuiteLines(wanted, reasons);
    if (lines.length === 0) return;
    if (required()) throw new Error(`CI=true requires every peer the tests use:\n${lines.map((line) => `  - ${line}`).join('\n')}`);
    for (const line of lines) console.log(`  peers: ${line}`);
  },
};

/** One line per set of missing peers: the suites it skips (each named once), then each peer, why it is missing and what gets it. */
function skippedSuiteLines(wanted: ReadonlyMap<PeerName, readonly Mocha.Suite[]>, reasons: ReadonlyMap<PeerName, string>): string[] {
  const missingOf = new Map<string, PeerName[]>();
  for (const [name, suites] of wanted) {
    if (!reasons.has(name)) continue;
    for (const suite of suites) missingOf.set(suite.fullTitle(), [...(missingOf.get(suite.fullTitle()) ?? []), name]);
  }
  const groups = new Map<string, { peers: PeerName[]; titles: string[] }>();
  for (const [title, peers] of missingOf) {
    const key = peers.join(',');
    const group = groups.get(key) ?? { peers, titles: [] };
    group.titles.push(title);
    groups.set(key, group);
  }
  return [...groups.values()].map(
    ({ peers, titles }) =>
      `${titles.length} suite(s) did not run (${titles.join('; ')}): they need ${peers
        .map((name) => `${peerTitle(name)}, and ${reasons.get(name)}; ${peerRemedy(name)}`)
        .join('; and ')}`,
  );
}
