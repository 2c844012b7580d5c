/**
 * Builds every peer into the cache (or finds it there) and prints how long each took:
 * `npx tsx test/support/peers/build.ts [peer ...]`, as `.ci/peers` (`npm run peers`) runs it. Exits 1 when any
 * peer could not be had, naming why.
 */
import { PEER_NAMES, peersCacheRoot, peerTitle, provisionPeer, type PeerName } from './provision';

async function main(names: readonly string[]): Promise<number> {
  const unknown = names.filter((name) => !(PEER_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    console.error(`unknown peer(s): ${unknown.join(', ')}; known: ${PEER_NAMES.join(', ')}`);
    return 2;
  }
  const selected = names.length > 0 ? (names as PeerName[]) : PEER_NAMES;
  console.log(`peers cache: ${peersCacheRoot()}`);
  let failed = 0;
  for (const name of selected) {
    const outcome = await provisionPeer(name, { build: true, progress: (line) => console.log(line) });
    if (outcome.ok) {
      console.log(
        `${name}: ${outcome.built ? 'built or installed' : 'found'} in ${outcome.seconds.toFixed(1)} s: ${peerTitle(name)} (${Object.values(outcome.paths.bin).join(', ')})`,
      );
    } else {
      failed++;
      console.error(`${name}: ${peerTitle(name)} could not be had: ${outcome.reason}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
