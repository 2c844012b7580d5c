import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { WaitingSnapshots } from '../../instrumentation/recorders/waiting-snapshots';

describe('WaitingSnapshots', () => {
  it('keeps each stage total as replicas report, replace and leave', () => {
    const snapshots = new WaitingSnapshots();
    assert.equal(snapshots.set(0, 0, 3), 3);
    assert.equal(snapshots.set(0, 1, 4), 7);
    assert.equal(snapshots.set(1, 0, 5), 5, 'another stage has its own total');
    assert.equal(snapshots.set(0, 0, 1), 5, "a replica's new count replaces its old one");
    assert.equal(snapshots.delete(0, 1), 1);
    assert.equal(snapshots.delete(0, 7), 1, 'a replica that never reported changes nothing');
    assert.equal(snapshots.delete(2, 0), 0, 'a stage that never reported totals 0');
  });

  it('always equals the sum over the latest counts (property)', () => {
    // Ids as a host may send them: small, large, negative or fractional; each keeps its own count.
    const id = fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom(-1, 0.5, 4096, 2 ** 31));
    const operation = fc.record({
      stage: id,
      replica: id,
      count: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 200 }), (operations) => {
        const snapshots = new WaitingSnapshots();
        const latest = new Map<string, number>();
        for (const { stage, replica, count } of operations) {
          const total = count === null ? snapshots.delete(stage, replica) : snapshots.set(stage, replica, count);
          if (count === null) latest.delete(`${stage}/${replica}`);
          else latest.set(`${stage}/${replica}`, count);
          let expected = 0;
          for (const [key, value] of latest) if (key.startsWith(`${stage}/`)) expected += value;
          assert.equal(total, expected);
        }
      }),
    );
  });

  it("knows whether a replica's latest count is a given one", () => {
    const snapshots = new WaitingSnapshots();
    assert.equal(snapshots.holds(0, 0, 0), false, 'a replica that never reported holds no count, not even 0');
    snapshots.set(0, 0, 3);
    assert.equal(snapshots.holds(0, 0, 3), true);
    assert.equal(snapshots.holds(0, 0, 2), false);
    assert.equal(snapshots.holds(0, 1, 3), false, 'another replica');
    assert.equal(snapshots.holds(1, 0, 3), false, 'another stage');
    snapshots.delete(0, 0);
    assert.equal(snapshots.holds(0, 0, 3), false, 'a replica that left holds nothing');
  });
});
