/**
 * How a test file asks for a real peer. At load time it names the peer: at the top level with a
 * title (`needPeer('prometheus3', 'title')`), then `peer.paths(this)` in the suite's `before` gives
 * the programs or skips the suite; or inside a `describe(…, function () {…})` with the suite itself
 * (`needPeer('debian-prometheus', this)`), which skips that whole suite, its hooks included, when
 * the peer is missing, and lets helpers reach the programs with `peerProgram`. The root hook
 * (`root-hooks.ts`) makes every named peer ready once, before any test runs, so the build is timed
 * on its own and never counted in a test's time, and names each missing peer in one line. Under CI
 * every named peer is required: the root hook fails the run instead.
 */
import type { PeerName, PeerPaths, Provisioned } from './provision';

interface Wanted {
  readonly titles: string[];
  readonly suites: Mocha.Suite[];
}

const wanted = new Map<PeerName, Wanted>();
const outcomes = new Map<PeerName, Provisioned>();

export interface PeerHandle {
  /** The peer's programs; skips the calling suite or test when the peer is missing. */
  paths(context: Mocha.Context): PeerPaths;
}

/**
 * Declares that `suite` needs the peer: a title (for the skip line) at a test file's top level, or
 * the suite being defined (`this` in a `describe` callback), which is then skipped as a whole when
 * the peer is missing.
 */
export function needPeer(name: PeerName, suite: string | Mocha.Suite): PeerHandle {
  const entry = wanted.get(name) ?? { titles: [], suites: [] };
  if (typeof suite === 'string') entry.titles.push(suite);
  else {
    entry.titles.push(suite.fullTitle());
    entry.suites.push(suite);
  }
  wanted.set(name, entry);
  return {
    paths(context: Mocha.Context): PeerPaths {
      const outcome = outcomes.get(name);
      if (outcome?.ok) return outcome.paths;
      // Not provisioned (the root hook was not loaded) or missing: either way this suite cannot run.
      context.skip();
    },
  };
}

/** The peers named so far, with the titles of the suites that named them. */
export function wantedPeers(): ReadonlyMap<PeerName, Readonly<Wanted>> {
  return wanted;
}

/** Records how provisioning went; a missing peer marks the suites declared with it as skipped. */
export function recordOutcome(name: PeerName, outcome: Provisioned): void {
  outcomes.set(name, outcome);
  if (!outcome.ok) for (const suite of wanted.get(name)?.suites ?? []) suite.pending = true;
}

/**
 * The path of `program` of a peer the root hook made ready. Throws when it did not: a suite that
 * declares the peer is skipped before it gets here, so the throw means a suite uses the peer
 * without declaring it.
 */
export function peerProgram(name: PeerName, program: string): string {
  const outcome = outcomes.get(name);
  const file = outcome?.ok ? outcome.paths.bin[program] : undefined;
  if (file === undefined) throw new Error(`${program} of the peer ${name} is not ready: declare needPeer('${name}', this) in the suite that uses it`);
  return file;
}
