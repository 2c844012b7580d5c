import assert from 'node:assert/strict';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { SharedRenderings, type RenderingReader, type SharedRendering } from '../../exporters/shared-rendering';
import { heldBytes, MAX_HELD_BYTES, MAX_READER_LAG_BYTES, READ_AHEAD_BYTES } from '../../exporters/rendering-memory';

const PIECE = 65_536;

/** A rendering of `pieces` pieces of 64 KiB (endless without), counting the pieces it was asked for. */
function counted(pieces = Infinity): { renderings: SharedRenderings<'text'>; produced: () => number } {
  let produced = 0;
  const renderings = new SharedRenderings(async () =>
    (function* () {
      while (produced < pieces) {
        produced++;
        yield 'x'.repeat(PIECE);
      }
    })(),
  );
  return { renderings, produced: () => produced };
}

/** A reader that streams and never takes anything; `dropped` once the rendering drops it. */
function stalledReader(): RenderingReader & { position: number; dropped: boolean } {
  const reader = {
    position: 0,
    dropped: false,
    onChunks: () => undefined,
    onEnd: () => undefined,
    drop: () => {
      reader.dropped = true;
    },
  };
  return reader;
}

/** A reader that streams and takes every chunk as it comes; resolves with the bytes it took once the rendering ends. */
function fastReader(rendering: SharedRendering): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    const reader: RenderingReader & { position: number } = {
      position: 0,
      onChunks: () => {
        while (reader.position < rendering.chunkCount) bytes += rendering.chunkAt(reader.position++).length;
        rendering.taken();
      },
      onEnd: () => {
        rendering.leave(reader);
        resolve(bytes);
      },
      drop: () => assert.fail('the fast reader is never dropped'),
    };
    rendering.join(reader);
  });
}

async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('memory held for readers that stream a rendering', () => {
  const none = (): void => undefined;
  // The drops' warnings are said by the tests of the server.
  before(() => diag.setLogger({ error: none, warn: none, info: none, debug: none, verbose: none }, DiagLogLevel.WARN));
  after(() => diag.disable());
  afterEach(() => assert.equal(heldBytes(), 0, 'every test lets go of its readers'));

  it('a rendering whose readers all stop reading waits READ_AHEAD_BYTES ahead of them, takes no new reader, and goes on when one takes', async () => {
    const { renderings, produced } = counted();
    const rendering = renderings.rendering('text', false);
    const reader = stalledReader();
    rendering.join(reader);
    await turns(50);
    assert.equal(READ_AHEAD_BYTES, 16 * PIECE);
    assert.equal(produced(), 16, 'sixteen pieces of 64 KiB, then it waits');
    assert.equal(heldBytes(), 16 * PIECE);
    assert.equal(rendering.joinable, false);
    const newcomer = renderings.rendering('text', false);
    assert.notEqual(newcomer, rendering, 'a newcomer gets values as new as its arrival');
    const visitor = stalledReader();
    newcomer.join(visitor);
    newcomer.leave(visitor);
    const before = produced();
    reader.position = 1;
    rendering.taken();
    await turns(50);
    assert.equal(produced() - before, 1, 'one piece more, then it waits again');
    rendering.leave(reader);
    assert.equal(reader.dropped, false);
  });

  it('a reader more than MAX_READER_LAG_BYTES behind a faster reader of its rendering is dropped, the faster one gets everything', async () => {
    const pieces = MAX_READER_LAG_BYTES / PIECE + 8;
    const { renderings } = counted(pieces);
    const rendering = renderings.rendering('text', false);
    const slow = stalledReader();
    let chunksWhenDropped = 0;
    rendering.join({
      ...slow,
      drop: () => {
        chunksWhenDropped = rendering.chunkCount;
        slow.dropped = true;
      },
    });
    assert.equal(await fastReader(rendering), pieces * PIECE);
    assert.equal(slow.dropped, true);
    assert.equal(chunksWhenDropped, MAX_READER_LAG_BYTES / PIECE + 1, 'dropped as soon as it was more than 16 MiB behind');
  });

  it('when renderings together hold more than MAX_HELD_BYTES for their readers, the reader that has taken nothing for the longest is dropped, wherever it is', async () => {
    const pieces = (15 * 2 ** 20) / PIECE;
    const stalled: Array<ReturnType<typeof stalledReader>> = [];
    const renderings: SharedRendering[] = [];
    for (let i = 0; i < 3; i++) {
      const rendering = counted(pieces).renderings.rendering('text', false);
      const reader = stalledReader();
      rendering.join(reader);
      stalled.push(reader);
      renderings.push(rendering);
      // The first two finish, each holding 15 MiB for its stalled reader; the third passes 32 MiB on its way.
      assert.equal(await fastReader(rendering), pieces * PIECE);
    }
    assert.equal(MAX_HELD_BYTES, 32 * 2 ** 20);
    assert.deepEqual(
      stalled.map((reader) => reader.dropped),
      [true, false, false],
      'the first of the two readers 15 MiB behind, which joined first and took nothing',
    );
    assert.equal(heldBytes(), 30 * 2 ** 20);
    renderings.forEach((rendering, i) => rendering.leave(stalled[i] as RenderingReader));
  });

  it('over MAX_HELD_BYTES, a reader that stopped taking is dropped before readers that took something since, even when they are further behind', async () => {
    const pieces = (15 * 2 ** 20) / PIECE;
    const finished: Array<[SharedRendering, ReturnType<typeof stalledReader>]> = [];
    for (let i = 0; i < 2; i++) {
      const rendering = counted(pieces).renderings.rendering('text', false);
      const reader = stalledReader();
      rendering.join(reader);
      assert.equal(await fastReader(rendering), pieces * PIECE);
      finished.push([rendering, reader]);
    }
    // 30 MiB held for two readers 15 MiB behind; a rendering whose only reader stalls waits 1 MiB ahead of it: 31 MiB.
    const waiting = counted().renderings.rendering('text', false);
    const stalled = stalledReader();
    waiting.join(stalled);
    await turns(50);
    assert.equal(heldBytes(), 31 * 2 ** 20);
    assert.equal(stalled.dropped, false);
    // The readers 15 MiB behind take a chunk each: they are reading, slowly.
    for (const [rendering, reader] of finished) {
      reader.position = 1;
      rendering.taken();
    }
    assert.equal(heldBytes(), 31 * 2 ** 20 - 2 * PIECE);
    // Two readers of one more rendering: one takes everything, one is given a chunk at a time. The
    // second holds every piece produced, so the piece that takes the total past MAX_HELD_BYTES is
    // known; each piece is published (and the budget kept) as it is produced. Waiting for that piece,
    // not for a count the rendering may or may not have run past in one turn, holds on any machine.
    const overBudget = (MAX_HELD_BYTES - heldBytes()) / PIECE + 1;
    const { renderings, produced } = counted((2 * READ_AHEAD_BYTES) / PIECE);
    const more = renderings.rendering('text', false);
    const fast = fastReader(more);
    const lagging = stalledReader();
    more.join(lagging);
    while (produced() < overBudget) await turns(1);
    // Past 32 MiB: the reader that took nothing since it joined goes, not the readers 15 MiB behind, nor the lagging one.
    assert.equal(stalled.dropped, true);
    assert.deepEqual(
      finished.map(([, reader]) => reader.dropped),
      [false, false],
    );
    assert.equal(lagging.dropped, false);
    lagging.position = (2 * READ_AHEAD_BYTES) / PIECE;
    more.taken();
    await fast;
    more.leave(lagging);
    for (const [rendering, reader] of finished) rendering.leave(reader);
  });

  it('a reader of the whole exposition is neither held back by a stalled reader nor counted against the bound', async () => {
    const pieces = 64;
    const { renderings } = counted(pieces);
    const rendering = renderings.rendering('text', false);
    const stalled = stalledReader();
    rendering.join(stalled);
    const whole = await rendering.bytes();
    assert.equal(whole.length, pieces * PIECE);
    assert.equal(heldBytes(), pieces * PIECE, 'what the stalled reader has not taken');
    rendering.leave(stalled);
  });
});
