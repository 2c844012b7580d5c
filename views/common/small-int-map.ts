/**
 * Ids below it are looked up in arrays, ids above it in maps: far more engines, or replicas of a
 * stage, than a pipeline has, and a bound on the array an id can make grow.
 */
export const DENSE_KEYS = 4096;

/**
 * A map for keys that are mostly small non-negative integers (engine indices): a key below
 * `DENSE_KEYS` is an array slot, anything else a map entry. Every engine poll looks its engine up,
 * and an array read costs a fraction of a map lookup; the array never holds more than
 * `DENSE_KEYS` slots, so keys that keep growing (engine indices are never reused) cannot grow it
 * without bound. Iteration is in ascending key order for the array part, then the map's insertion order.
 */
export class SmallIntMap<V> {
  private readonly dense: Array<V | undefined> = [];
  private readonly sparse = new Map<unknown, V>();
  private denseCount = 0;

  get size(): number {
    return this.denseCount + this.sparse.size;
  }

  /** Any key: what is not a small integer (a fraction, a string, a Symbol) is looked up in the map, never converted. */
  get(key: number): V | undefined {
    return isDense(key) ? this.dense[key] : this.sparse.get(key);
  }

  has(key: number): boolean {
    return this.get(key) !== undefined;
  }

  /** Sets `key` to `value` (undefined is not a value: use `delete`). */
  set(key: number, value: V): this {
    if (!isDense(key)) {
      this.sparse.set(key, value);
      return this;
    }
    // Slots are filled in order as keys are handed out: holes only where a key was deleted.
    while (this.dense.length < key) this.dense.push(undefined);
    if (this.dense[key] === undefined) this.denseCount++;
    this.dense[key] = value;
    return this;
  }

  delete(key: number): boolean {
    if (!isDense(key)) return this.sparse.delete(key);
    if (this.dense[key] === undefined) return false;
    this.dense[key] = undefined;
    this.denseCount--;
    return true;
  }

  *entries(): IterableIterator<[number, V]> {
    for (let key = 0; key < this.dense.length; key++) {
      const value = this.dense[key];
      if (value !== undefined) yield [key, value];
    }
    yield* this.sparse.entries() as IterableIterator<[number, V]>;
  }

  *keys(): IterableIterator<number> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }
}

function isDense(key: number): boolean {
  return typeof key === 'number' && key >= 0 && key < DENSE_KEYS && Number.isInteger(key);
}
