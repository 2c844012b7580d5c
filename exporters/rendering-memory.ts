import { LimitedWarning } from '../views/common/diag-warnings';

/**
 * One budget of memory for what renderings hold for the readers that stream them (HTTP scrapes),
 * across every rendering of the process, as `event-loop-slices.ts` is one budget of event-loop
 * time. A reader that does not read (a client that sent `GET /metrics` and stopped, a slow-read
 * attack) would otherwise keep the rest of an exposition of tens of megabytes, one per scrape.
 *
 * - A rendering runs at most `READ_AHEAD_BYTES` ahead of its fastest streaming reader, then waits
 *   for one of them to take more: a rendering whose readers all stall holds that much, not the
 *   whole exposition.
 * - A streaming reader more than `MAX_READER_LAG_BYTES` behind its rendering (which a faster reader
 *   of the same rendering carried on) is dropped.
 * - When the renderings together hold more than `MAX_HELD_BYTES` for streaming readers, the reader
 *   that has taken nothing for the longest, wherever it is, is dropped (of two, the one further
 *   behind), and the next, until they hold less. A reader that keeps taking what it is given is
 *   not dropped for one that stopped, even when it is momentarily further behind.
 *
 * A HEAD is a streaming reader that takes every chunk at once and keeps only its length: counted
 * like a GET. Readers that want the whole exposition (`metricsBytes()`, `metricsText()`) are not
 * counted: they asked for all of it at once, in the host's own code. A request pipelined behind
 * others on its connection is no reader at all until it owns the socket (`metrics-handler.ts`).
 */

export const READ_AHEAD_BYTES = 1024 * 1024;
export const MAX_READER_LAG_BYTES = 16 * 1024 * 1024;
export const MAX_HELD_BYTES = 32 * 1024 * 1024;

/** A rendering as the budget sees it (`SharedRendering`). */
export interface HeldRendering {
  /** Bytes it holds for its streaming readers: from what the one furthest behind has taken to what it rendered. */
  readonly heldForReaders: number;
  /** Its streaming reader that has taken nothing for the longest (of two, the one further behind); undefined without one. */
  readonly slowest: SlowestReader | undefined;
  /** Drops `slowest`. */
  dropSlowest(): void;
}

export interface SlowestReader {
  /** Bytes rendered it has not taken. */
  readonly lag: number;
  /** When it last took something, or joined (`performance.now()`). */
  readonly tookAt: number;
}

const holding = new Set<HeldRendering>();
const drops = new LimitedWarning();

/** Counts `rendering` while it has streaming readers. */
export function hold(rendering: HeldRendering, streaming: boolean): void {
  if (streaming) holding.add(rendering);
  else holding.delete(rendering);
}

/** Bytes every rendering holds for its streaming readers together. */
export function heldBytes(): number {
  let total = 0;
  for (const rendering of holding) total += rendering.heldForReaders;
  return total;
}

/** Drops the readers furthest behind, wherever they are, until the renderings hold at most `MAX_HELD_BYTES` for them. */
export function keepWithinBudget(): void {
  for (let total = heldBytes(); total > MAX_HELD_BYTES; total = heldBytes()) {
    let victim: HeldRendering | undefined;
    for (const rendering of holding) if (victim?.slowest === undefined || dropsBefore(rendering.slowest, victim.slowest)) victim = rendering;
    const slowest = victim?.slowest;
    if (victim === undefined || slowest === undefined) return;
    warnDropped(slowest.lag, `the scrapes under way held ${mebibytes(total)} for their readers, over ${mebibytes(MAX_HELD_BYTES)}`);
    victim.dropSlowest();
  }
}

/** Whether reader `a` is dropped before reader `b`: the one that has taken nothing for longer, else the one further behind. */
export function dropsBefore(a: SlowestReader | undefined, b: SlowestReader): boolean {
  if (a === undefined) return false;
  return a.tookAt !== b.tookAt ? a.tookAt < b.tookAt : a.lag > b.lag;
}

/** Says (rate-limited) that a reader was dropped, how far behind it was, and why. */
export function warnDropped(lagBytes: number, why: string): void {
  drops.warn(`dropped a /metrics reader ${mebibytes(lagBytes)} behind its rendering (it reads more slowly than the exposition is sent): ${why}`);
}

export function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
