import assert from 'node:assert/strict';
import { ResultFollower } from '../../instrumentation/hooks/telemetry-guard';

describe('ResultFollower: following many results with the same callbacks', () => {
  const follower = () => {
    const values: unknown[] = [];
    const reasons: unknown[] = [];
    return {
      values,
      reasons,
      follower: new ResultFollower<unknown>(
        (value) => values.push(value),
        (reason) => reasons.push(reason),
      ),
    };
  };

  it('a plain promise comes back as one that settles with the same value, after the callback saw it', async () => {
    const { values, follower: f } = follower();
    const original = Promise.resolve(7);
    const followed = f.follow(original, true);
    assert.notEqual(followed, original);
    assert.equal(await followed, 7);
    assert.deepEqual(values, [7]);
  });

  it('a result said to be a plain promise that is not one is followed as what it is: never a throw into the host', async () => {
    const { values, follower: f } = follower();
    const thenable = { then: (resolve: (value: number) => void) => resolve(3) };
    assert.equal(f.follow(thenable, true), thenable, 'the very same thenable');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(values, [3]);
    const plainValue = { done: true };
    assert.equal(f.follow(plainValue, true), plainValue);
    assert.deepEqual(values, [3, plainValue]);
  });

  it('a rejection reaches the reason callback and the follower rejects with the same reason', async () => {
    const { reasons, follower: f } = follower();
    const reason = new Error('host');
    await assert.rejects(f.follow(Promise.reject(reason), true), (error) => error === reason);
    assert.deepEqual(reasons, [reason]);
  });
});
