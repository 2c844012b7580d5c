import { measureMemory } from 'node:vm';

/**
 * A full garbage collection with no V8 flag: an eager memory measurement collects the heap
 * before it measures. For tests of what happens when an object is collected (a dropped stream
 * ends); finalizers run in a later task, so callers wait a moment after it.
 */
export async function collectGarbage(): Promise<void> {
  await measureMemory({ execution: 'eager' });
}
