import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { resolveCatalog, type FamilyKey } from '../../../views/catalog';
import { SeriesStore } from '../../../views/store/series-store';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const SERIES = 10_000;

/** Heap (and typed-array storage) per series of one family, bound with three labels as a replica's series are, one record each. */
function bytesPerSeries(key: FamilyKey, value: number): number {
  collectGarbage();
  collectGarbage();
  const before = process.memoryUsage();
  const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm', cardinalityLimit: SERIES + 1 });
  const family = store.family(key);
  assert.ok(family !== undefined);
  assert.deepEqual(family.family.labels, ['model_name', 'stage', 'replica']);
  for (let i = 0; i < SERIES; i++) family.bind(['m', String(i % 3), String(i)]).record(value);
  collectGarbage();
  collectGarbage();
  const after = process.memoryUsage();
  assert.equal(family.series.length, SERIES);
  return (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / SERIES;
}

describe('series store: bytes per series', () => {
  // prom-client holds such a counter or gauge child in about 210 bytes; these bounds leave room for the measurement's noise.
  it('a counter or a gauge series costs no more than about 250 bytes: label text, creation time and value', () => {
    const counter = bytesPerSeries('upstream.promptTokens', 3);
    const gauge = bytesPerSeries('upstream.numRequestsRunning', 0.5);
    assert.ok(counter < 250, `counter: ${counter.toFixed(0)} B per series`);
    assert.ok(gauge < 250, `gauge: ${gauge.toFixed(0)} B per series`);
  });

  it('a histogram series with 22 buckets costs no more than about 500 bytes', () => {
    const histogram = bytesPerSeries('upstream.timeToFirstTokenSeconds', 0.2);
    assert.ok(histogram < 500, `histogram: ${histogram.toFixed(0)} B per series`);
  });
});
