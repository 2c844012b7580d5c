import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DENSE_KEYS, SmallIntMap } from '../../views/common/small-int-map';

type Operation = { kind: 'set'; key: number; value: string } | { kind: 'delete'; key: number } | { kind: 'get'; key: number };

/** Keys of every kind a caller can hand in: small ids, ids past the array, and numbers no id is. */
const KEY = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: DENSE_KEYS - 2, max: DENSE_KEYS + 2 }),
  fc.constantFrom(-1, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53),
);
const OPERATION: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: KEY, value: fc.string({ maxLength: 3 }) }),
  fc.record({ kind: fc.constant('delete' as const), key: KEY }),
  fc.record({ kind: fc.constant('get' as const), key: KEY }),
);

function isDenseKey(key: number): boolean {
  return Number.isInteger(key) && key >= 0 && key < DENSE_KEYS;
}

describe('views: SmallIntMap', () => {
  it('property: answers every get, has, delete and size as a Map does, and lists small keys ascending, then the others in insertion order', () => {
    fc.assert(
      fc.property(fc.array(OPERATION, { maxLength: 60 }), (operations) => {
        const table = new SmallIntMap<string>();
        const model = new Map<number, string>();
        for (const operation of operations) {
          if (operation.kind === 'set') {
            assert.equal(table.set(operation.key, operation.value), table);
            model.set(operation.key, operation.value);
          } else if (operation.kind === 'delete') {
            assert.equal(table.delete(operation.key), model.delete(operation.key));
          } else {
            assert.equal(table.get(operation.key), model.get(operation.key));
            assert.equal(table.has(operation.key), model.has(operation.key));
          }
          assert.equal(table.size, model.size);
        }
        const small = [...model].filter(([key]) => isDenseKey(key)).sort(([a], [b]) => a - b);
        const others = [...model].filter(([key]) => !isDenseKey(key));
        assert.deepEqual([...table.entries()], [...small, ...others]);
        assert.deepEqual(
          [...table.keys()],
          [...small, ...others].map(([key]) => key),
        );
        assert.deepEqual(
          [...table.values()],
          [...small, ...others].map(([, value]) => value),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('looks up what is no number (a string, a Symbol, an object) without converting it, and finds nothing', () => {
    const table = new SmallIntMap<string>();
    table.set(0, 'zero');
    const throwing = { valueOf: (): number => assert.fail('converted') };
    for (const key of ['0', Symbol('0'), throwing, null, undefined]) {
      assert.equal(table.get(key as never), undefined);
      assert.equal(table.has(key as never), false);
      assert.equal(table.delete(key as never), false);
    }
    assert.equal(table.get(0), 'zero');
  });

  it('keeps no more array slots than DENSE_KEYS, however many keys it has seen', () => {
    const table = new SmallIntMap<number>();
    for (let key = 0; key < 3 * DENSE_KEYS; key++) {
      table.set(key, key);
      table.delete(key - 1);
    }
    assert.equal(table.size, 1);
    assert.deepEqual([...table.entries()], [[3 * DENSE_KEYS - 1, 3 * DENSE_KEYS - 1]]);
    const slots = (table as unknown as { dense: unknown[] }).dense.length;
    assert.equal(slots, DENSE_KEYS);
  });
});
