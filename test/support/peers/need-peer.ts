/**
 * How a test file asks for a real peer: inside a `describe(…, function () {…})`, with the suite
 * itself (`needPeer('prometheus3', this)`). The root hook (`root-hooks.ts`) looks for every named
 * peer once, before any test runs, and names each suite it cannot run in one line; a suite whose
 * peer is missing is then skipped as a whole, its hooks included (mocha runs no hook of a pending
 * suite), so a `before` may start the peer and an `after` may stop it without guarding against a
 * peer that is not there. Under CI every named peer is required: the root hook fails the run instead.
 */
import type { PeerName, PeerPaths, Provisioned } from './provision';

const wanted = new Map<PeerName, Mocha.Suite[]>();
const outcomes = new Map<PeerName, Provisioned>();

export interface PeerHandle {
  /** The peer's programs, in a hook or test of the suite that declared it (skipped when it is missing). */
  paths(): PeerPaths;
}

/** Declares that `suite` (`this` in a `describe` callback) needs the peer, and skips it as a whole when it is missing. */
export function needPeer(name: PeerName, suite: Mocha.Suite): PeerHandle {
  wanted.set(name, [...(wanted.get(name) ?? []), suite]);
  return { paths: () => readyPeer(name) };
}

/**
 * The peers named since the last call, with the suites that named them; forgets them, so that a
 * worker of `mocha --parallel`, which loads one file after another, names each suite once.
 */
export function takeWantedPeers(): ReadonlyMap<PeerName, readonly Mocha.Suite[]> {
  const taken = new Map(wanted);
  wanted.clear();
  return taken;
}

/** Records how looking for a peer went; a missing peer marks `suites`, which declared it, as skipped. */
export function recordOutcome(name: PeerName, outcome: Provisioned, suites: readonly Mocha.Suite[]): void {
  outcomes.set(name, outcome);
  if (!outcome.ok) for (const suite of suites) suite.pending = true;
}

/**
 * The programs of a peer the root hook found. Throws when it did not: a suite that declares the
 * peer is skipped before it gets here, so the throw means a suite uses the peer without declaring it.
 */
function readyPeer(name: PeerName): PeerPaths {
  const outcome = outcomes.get(name);
  if (outcome?.ok) return outcome.paths;
  throw new Error(`the peer ${name} is not ready: declare needPeer('${name}', this) in the suite that uses it`);
}

/** The path of `program` of a peer the root hook found (see `readyPeer`). */
export function peerProgram(name: PeerName, program: string): string {
  const file = readyPeer(name).bin[program];
  if (file === undefined) throw new Error(`the peer ${name} has no program ${program}`);
  return file;
}
