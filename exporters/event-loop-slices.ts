/**
 * One budget of event-loop time for everything the package does in slices: a scrape's rendering,
 * an engine's parse, a pull's per-engine work. A sliced task asks `sliceDue()` between small
 * steps and, when it is, waits for `nextSlice()`. Waiting tasks resume one per turn of the event
 * loop, so however many run at once (four engines parsed together beside a rendering), the host's
 * I/O and timers get their turn every `SLICE_MILLIS` or so: tasks that each yielded on their own
 * would be resumed back to back in one turn, and hold the loop for the sum of their slices.
 */

/**
 * How long a slice may hold the event loop. A streaming speech pipeline hears a blocked event loop
 * as a late audio packet; a few milliseconds is below what a 20 ms audio frame notices, and long
 * enough that the turns in between cost nothing measurable.
 */
export const SLICE_MILLIS = 2;

/** When the running slice began (`performance.now()`); a task resumed any other way finds it stale and yields first. */
let sliceStart = Number.NEGATIVE_INFINITY;
const waiting: Array<() => void> = [];
let scheduled = false;

/** Whether the running slice has used its time. */
export function sliceDue(): boolean {
  return performance.now() - sliceStart >= SLICE_MILLIS;
}

/** Resolves at the start of a slice of the caller's own, on a later turn of the event loop. */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeOne);
    }
  });
}

function resumeOne(): void {
  const resume = waiting.shift();
  // Scheduled from inside an immediate, the next one runs on the next turn, after I/O and timers.
  scheduled = waiting.length > 0;
  if (scheduled) setImmediate(resumeOne);
  sliceStart = performance.now();
  resume?.();
}
