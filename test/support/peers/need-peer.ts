/**
 * How a test file asks for a real peer. At load time it names the peer (`needPeer('prometheus3')`);
 * the root hook (`root-hooks.ts`) then makes every named peer ready once, before any test runs, so
 * the build is timed on its own and never counted in a test's time. In the suite's `before`,
 * `peer.paths(this)` gives the programs, or skips the suite when the peer could not be had (the
 * root hook has already said so, in one line). Under CI every named peer is required: the root
 * hook fails the run instead.
 */
import type { PeerName, PeerPaths, Provisioned } from './provision';

const wanted = new Map<PeerName, string[]>();
const outcomes = new Map<PeerName, Provisioned>();

export interface PeerHandle {
  /** The peer's programs; skips the calling suite or test when the peer is missing. */
  paths(context: Mocha.Context): PeerPaths;
}

/** Declares that `suite` (for the skip line) needs the peer; call at a test file's top level. */
export function needPeer(name: PeerName, suite: string): PeerHandle {
  const suites = wanted.get(name) ?? [];
  suites.push(suite);
  wanted.set(name, suites);
  return {
    paths(context: Mocha.Context): PeerPaths {
      const outcome = outcomes.get(name);
      if (outcome?.ok) return outcome.paths;
      // Not provisioned (the root hook was not loaded) or missing: either way this suite cannot run.
      context.skip();
    },
  };
}

/** The peers named so far, with the suites that named them. */
export function wantedPeers(): ReadonlyMap<PeerName, readonly string[]> {
  return wanted;
}

export function recordOutcome(name: PeerName, outcome: Provisioned): void {
  outcomes.set(name, outcome);
}
