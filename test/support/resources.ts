import assert from 'node:assert/strict';

/**
 * What keeps the event loop alive (`process.getActiveResourcesInfo()`), sorted so two lists
 * compare, once it holds still: read until two reads a few milliseconds apart agree (at most
 * `timeoutMillis`), so that a socket or timer on its way out is not taken for the steady state.
 * Inside a test that awaits, mocha's own timeout timer exists only from the first turn of the
 * loop on; it is in every read.
 */
export async function activeResources(timeoutMillis = 500): Promise<string[]> {
  const deadline = Date.now() + timeoutMillis;
  let previous = await nextRead(0);
  for (;;) {
    const now = await nextRead(10);
    if (sameList(now, previous) || Date.now() >= deadline) return now;
    previous = now;
  }
}

/**
 * Asserts that the active resources come back to exactly `expected` (from `activeResources()`)
 * within `timeoutMillis`: a socket closed by its peer, or a handle being closed, goes away a few
 * turns of the loop later, not at once.
 */
export async function assertResourcesBackTo(expected: readonly string[], what: string, timeoutMillis = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  let now = await nextRead(0);
  while (!sameList(now, expected) && Date.now() < deadline) now = await nextRead(20);
  assert.deepEqual(now, [...expected], `${what}: what keeps the event loop alive is what it was before`);
}

/**
 * The TypeScript loader (tsx) expires its disk cache in the background after startup, one file
 * system request after another for a second or more: file system requests are left out, every
 * handle and timer counts.
 */
const BACKGROUND_REQUESTS = new Set(['FSReqCallback', 'FSReqPromise']);

/** The sorted list after `delayMillis` (0: the next turn of the loop); the delay's own timer is gone by then. */
async function nextRead(delayMillis: number): Promise<string[]> {
  await new Promise((resolve) => (delayMillis === 0 ? setImmediate(resolve) : setTimeout(resolve, delayMillis)));
  return process
    .getActiveResourcesInfo()
    .filter((resource) => !BACKGROUND_REQUESTS.has(resource))
    .sort();
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
