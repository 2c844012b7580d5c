import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { resolveCatalog } from '../../../views/catalog';
import { DEFAULT_NATIVE_MAX_BUCKETS, DEFAULT_NATIVE_SCHEMA, DEFAULT_NATIVE_ZERO_THRESHOLD } from '../../../views/store/native-buckets';
import { SeriesStore } from '../../../views/store/series-store';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const SERIES = 5_000;
const TTFT = 'vllm:time_to_first_token_seconds';

/** Heap and typed-array bytes per TTFT series (22 classic buckets), bound as a replica's series are, each fed `values`. */
function bytesPerSeries(native: boolean, values: readonly number[]): number {
  collectGarbage();
  collectGarbage();
  const before = process.memoryUsage();
  const store = new SeriesStore(resolveCatalog({ logStats: true }), {
    modelName: 'm',
    cardinalityLimit: SERIES + 1,
    nativeHistograms: native
      ? {
          config: { schema: DEFAULT_NATIVE_SCHEMA, maxBuckets: DEFAULT_NATIVE_MAX_BUCKETS, zeroThreshold: DEFAULT_NATIVE_ZERO_THRESHOLD },
          families: new Set([TTFT]),
        }
      : undefined,
  });
  const family = store.family('upstream.timeToFirstTokenSeconds');
  assert.ok(family !== undefined);
  for (let i = 0; i < SERIES; i++) {
    const series = family.bind(['m', String(i % 3), String(i)]);
    for (const value of values) series.record(value);
  }
  collectGarbage();
  collectGarbage();
  const after = process.memoryUsage();
  assert.equal(family.series.length, SERIES);
  return (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / SERIES;
}

/** 200 first-token latencies from 30 ms to 3 s (two decades: 54 buckets at schema 3). */
const SPREAD = Array.from({ length: 200 }, (_, i) => 0.03 * 100 ** (i / 199));

describe('native histogram series: bytes per series', () => {
  it('native buckets add about 300 bytes to a series with one observation, and under 1 KiB with latencies over two decades', () => {
    const classic = bytesPerSeries(false, [0.2]);
    const nativeOne = bytesPerSeries(true, [0.2]);
    const nativeSpread = bytesPerSeries(true, SPREAD);
    console.log(
      `      classic ${classic.toFixed(0)} B, native (1 observation) ${nativeOne.toFixed(0)} B, native (2 decades, 54 buckets) ${nativeSpread.toFixed(0)} B per series`,
    );
    assert.ok(nativeOne - classic < 450, `native buckets with one observation: +${(nativeOne - classic).toFixed(0)} B`);
    assert.ok(nativeSpread - classic < 1024, `native buckets over two decades: +${(nativeSpread - classic).toFixed(0)} B`);
  });
});
