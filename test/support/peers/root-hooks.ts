/**
 * Mocha root hook (loaded by .mocharc.json): before the first test, makes ready every peer the
 * loaded test files asked for (`needPeer`), from the cache or by building it, and prints one line
 * per peer. A peer that cannot be had skips the suites that need it, named in one line with the
 * command that gets it; under CI (`CI=true`) it fails the run once, before any test, instead.
 */
import { recordOutcome, wantedPeers } from './need-peer';
import { peerCommand, peerTitle, provisionPeer } from './provision';

const required = (): boolean => process.env.CI === 'true';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    const wanted = wantedPeers();
    if (wanted.size === 0) return;
    this.timeout(0); // A first build of Prometheus takes minutes; every later run finds it cached.
    const missing: string[] = [];
    const ready: string[] = [];
    const started = performance.now();
    for (const [name, { titles }] of wanted) {
      const outcome = await provisionPeer(name, (line) => console.log(`  peers: ${line}`));
      recordOutcome(name, outcome);
      if (outcome.ok) {
        if (outcome.built) console.log(`  peers: built or installed ${peerTitle(name)} in ${outcome.seconds.toFixed(0)} s`);
        ready.push(`${name} ${outcome.paths.version}`);
        continue;
      }
      const line = `${titles.length} suite(s) did not run (${titles.join('; ')}): they need ${peerTitle(name)}, and ${outcome.reason}; \`${peerCommand(name)}\` gets it`;
      missing.push(line);
      if (!required()) console.log(`  peers: ${line}`);
    }
    if (ready.length > 0) console.log(`  peers: ${ready.join(', ')} ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (missing.length > 0 && required()) {
      throw new Error(`CI=true requires every peer the tests use:\n${missing.map((line) => `  - ${line}`).join('\n')}`);
    }
  },
};
