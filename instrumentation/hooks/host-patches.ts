export type HostMethodFn = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Where a patched prototype keeps its patches: a process-wide key, so two instrumentations (or
 * two copies of this package) find the one patch a method has instead of stacking or unwrapping
 * each other's.
 */
const PATCHES = Symbol.for('omni-otel-metrics.host-patches');

/**
 * The listeners of a patch nobody listens to: always this one list, so that a wrapper's idle check
 * is one comparison with a constant (`patch.listeners === NO_LISTENERS`).
 */
export const NO_LISTENERS: readonly never[] = Object.freeze([]);

/** One patched host method: its original, the wrapper in its place, and who listens to it now. */
export interface MethodPatch<L> {
  readonly original: HostMethodFn;
  readonly wrapper: HostMethodFn;
  /** Replaced, never mutated: a call in progress keeps the list it started with. Empty: `NO_LISTENERS`. */
  listeners: readonly L[];
}

type PatchTable = Map<string, MethodPatch<unknown>>;

function tableOf(owner: object, create: boolean): PatchTable | undefined {
  if (Object.prototype.hasOwnProperty.call(owner, PATCHES)) return (owner as Record<symbol, PatchTable>)[PATCHES];
  if (!create) return undefined;
  const table: PatchTable = new Map();
  Object.defineProperty(owner, PATCHES, { value: table, configurable: true, enumerable: false, writable: false });
  return table;
}

/**
 * Adds `listener` to the method `name` of `owner`, patching the method the first time anyone
 * listens: `makeWrapper` receives the original and the patch, whose `listeners` the wrapper reads
 * on every call (an empty list: the wrapper only calls the original). A listener already there is
 * not added twice.
 */
export function listenTo<L>(owner: object, name: string, listener: L, makeWrapper: (original: HostMethodFn, patch: MethodPatch<L>) => HostMethodFn): void {
  const table = tableOf(owner, true) as PatchTable;
  const target = owner as Record<string, unknown>;
  let patch = table.get(name) as MethodPatch<L> | undefined;
  if (patch !== undefined && target[name] === patch.original) {
    // Restored earlier and untouched since: the same wrapper goes back, so that instances which
    // bound it in their constructor (`this.generate = this.generate.bind(this)`) are heard again.
    replaceMethod(owner, name, patch.wrapper);
  } else if (patch === undefined || !inChain(target[name], patch.wrapper)) {
    // First listener, or the method was replaced since: patch what is there now.
    const original = target[name] as HostMethodFn;
    const fresh: { original: HostMethodFn; wrapper: HostMethodFn; listeners: readonly L[] } = {
      original,
      wrapper: original,
      listeners: patch?.listeners ?? NO_LISTENERS,
    };
    const wrapper = makeWrapper(original, fresh);
    // The marks shimmer puts on its wrappers, which tools (and the SDK's isWrapped) read.
    Object.defineProperties(wrapper, {
      __original: { value: original, configurable: true },
      __wrapped: { value: true, configurable: true },
    });
    fresh.wrapper = wrapper;
    patch = fresh;
    table.set(name, patch as MethodPatch<unknown>);
    replaceMethod(owner, name, wrapper);
  }
  if (!patch.listeners.includes(listener)) patch.listeners = [...patch.listeners, listener];
}

/**
 * Removes `listener` from the method. When no one listens any more and the wrapper is still what
 * the prototype holds, the original is put back exactly; a wrapper someone else has since wrapped
 * stays in their chain, passing calls straight through. Either way the idle wrapper is kept for
 * the next listener, who puts it back in place rather than a new one.
 */
export function stopListening<L>(owner: object, name: string, listener: L): void {
  const table = tableOf(owner, false);
  const patch = table?.get(name) as MethodPatch<L> | undefined;
  if (table === undefined || patch === undefined) return;
  const rest = patch.listeners.filter((l) => l !== listener);
  patch.listeners = rest.length > 0 ? rest : NO_LISTENERS;
  if (rest.length > 0) return;
  const target = owner as Record<string, unknown>;
  if (target[name] !== patch.wrapper) return;
  // The patch is kept, idle: instances that bound its wrapper call the original through it.
  replaceMethod(owner, name, patch.original);
}

/** Puts `method` in place of `owner[name]`, its other attributes (enumerable, writable, configurable) kept. */
function replaceMethod(owner: object, name: string, method: HostMethodFn): void {
  Object.defineProperty(owner, name, { ...Object.getOwnPropertyDescriptor(owner, name), value: method });
}

/** Whether `wrapper` is `value` or lies under it in a chain of shimmer-style wrappers (`__original`). */
function inChain(value: unknown, wrapper: HostMethodFn): boolean {
  for (let depth = 0; typeof value === 'function' && depth < 16; depth++) {
    if (value === wrapper) return true;
    value = (value as { __original?: unknown }).__original;
  }
  return false;
}
