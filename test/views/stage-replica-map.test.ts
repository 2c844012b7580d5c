import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StageReplicaMap } from '../../views/stage-replica-map';

describe('StageReplicaMap lookups', () => {
  it('engineIndex agrees with a plain model through any adds, removes and lookups, whatever the ids (property)', () => {
    // Ids on both sides of the array-backed range, and what a host may send that names no replica.
    const id = fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constantFrom(4095, 4096, 70_000));
    const hostile = {
      valueOf(): number {
        throw new Error('hostile');
      },
    };
    const odd = fc.constantFrom<unknown>(-1, 0.5, Number.NaN, '0', undefined, 2 ** 40, hostile);
    const operation = fc.oneof(
      fc.record({ op: fc.constant('add' as const), stage: fc.integer({ min: 0, max: 1 }), replica: fc.option(id) }),
      fc.record({ op: fc.constant('remove' as const), stage: fc.integer({ min: 0, max: 1 }), replica: id }),
      fc.record({
        op: fc.constant('lookup' as const),
        stage: fc.oneof(fc.integer({ min: -1, max: 2 }), fc.constantFrom<unknown>('constructor', 'length', '0', 0.5, hostile)),
        replica: fc.oneof(id, odd),
      }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
        const map = new StageReplicaMap([1, 2]);
        const model = [
          new Map([[0, 0]]),
          new Map([
            [0, 1],
            [1, 2],
          ]),
        ];
        let next = 3;
        for (const step of operations) {
          const replicas = typeof step.stage === 'number' ? model[step.stage] : undefined;
          if (step.op === 'add' && replicas !== undefined) {
            const wanted = step.replica ?? (replicas.size === 0 ? 0 : Math.max(...replicas.keys()) + 1);
            if (replicas.has(wanted)) {
              assert.throws(() => map.addReplica(step.stage, step.replica ?? undefined), RangeError);
            } else {
              assert.deepEqual(map.addReplica(step.stage, step.replica ?? undefined), { engineIndex: next, replica: wanted });
              replicas.set(wanted, next++);
            }
          } else if (step.op === 'remove' && replicas !== undefined) {
            assert.equal(map.removeReplica(step.stage, step.replica), replicas.get(step.replica));
            replicas.delete(step.replica);
          } else if (step.op === 'lookup') {
            const expected = typeof step.replica === 'number' ? replicas?.get(step.replica) : undefined;
            assert.equal(map.engineIndex(step.stage as number, step.replica as number), expected);
          }
        }
        assert.deepEqual(
          map.replicasPerStage,
          model.map((replicas) => replicas.size),
        );
      }),
    );
  });
});
