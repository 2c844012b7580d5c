import { measureMemory, type MeasureMemoryOptions } from 'node:vm';

/**
 * `vm.measureMemory`, without Node's one ExperimentalWarning about it on the test output: the
 * tests use it for the collection it makes, not as a feature they try out.
 */
export async function measureMemoryQuietly(options: MeasureMemoryOptions): Promise<unknown> {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (!String(warning).includes('vm.measureMemory')) (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return await measureMemory(options);
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * A full garbage collection with no V8 flag: an eager memory measurement collects the heap
 * before it measures. For tests of what happens when an object is collected (a dropped stream
 * ends); finalizers run in a later task, so callers wait a moment after it.
 */
export async function collectGarbage(): Promise<void> {
  await measureMemoryQuietly({ execution: 'eager' });
}
