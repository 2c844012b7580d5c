import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mergeSnapshots, retireSnapshot, type GaugeMergePolicy } from '../../exporters/cluster/merge';
import { isProtocolMessage } from '../../exporters/cluster/protocol';
import { EMPTY_SNAPSHOT, type ClusterSnapshot } from '../../exporters/snapshot';
import { MAX_PINNED_STREAMS, SnapshotChecker } from '../../exporters/cluster/snapshot-check';
import { aggregateFamilies } from '../../exporters/cluster/cluster-primary';
import { writeText } from '../../exporters/exposition/text-writer';
import { writeProtobuf } from '../../exporters/exposition/protobuf-writer';
import { resolveCatalog } from '../../views/catalog/catalog';
import { declaredFamilies } from '../../views/declared-families';
import { withWarnings } from '../views/store/store-fixture';

const SUM_ALL: GaugeMergePolicy = () => 'sum';
const CATALOG = resolveCatalog({ logStats: true });
const LATENCY = 'vllm:e2e_request_latency_seconds';
const LATENCY_BOUNDS = [...(CATALOG.byName(LATENCY)?.buckets ?? [])];

/** A latency histogram point of `count` observations, all in the first bucket of `bounds`. */
function latency(bounds: readonly number[], count: number): unknown {
  const counts = new Array<number>(bounds.length + 1).fill(0);
  counts[0] = count;
  return {
    name: LATENCY,
    kind: 'histogram',
    description: 'E2E latency',
    unit: '',
    points: [{ attributes: { model_name: 'm' }, value: { boundaries: bounds, counts, sum: count / 10, count } }],
  };
}

function success(value: unknown, attributes: unknown = { model_name: 'm' }): unknown {
  return { name: 'vllm:omni_requests_success_total', kind: 'counter', description: 'Successes', unit: '', points: [{ attributes, value, startTime: 100 }] };
}

function latencyCount(snapshot: ClusterSnapshot): number | undefined {
  const value = snapshot.metrics.find((metric) => metric.name === LATENCY)?.points[0]?.value;
  return typeof value === 'object' && value !== null ? value.count : undefined;
}

describe('cluster: worker snapshots are checked point by point on arrival', () => {
  it('drops null attributes, a null point and a histogram with a number for buckets; keeps the rest exactly, with one warning naming the worker', () => {
    const checker = new SnapshotChecker(CATALOG);
    const hostile = {
      metrics: [
        {
          name: 'vllm:omni_requests_success_total',
          kind: 'counter',
          description: 'Successes',
          unit: '',
          points: [{ attributes: null, value: 1 }, null, { attributes: { model_name: 'm', finished_reason: 'stop' }, value: 7, startTime: 100 }],
        },
        { name: LATENCY, kind: 'histogram', description: 'E2E latency', unit: '', points: [{ attributes: { model_name: 'm' }, value: 42 }] },
        { name: 'vllm:num_requests_running', kind: 'gauge', description: 'Running', unit: '', points: [{ attributes: { model_name: 'm' }, value: null }] },
      ],
    };
    const { result, warnings } = withWarnings(() => checker.check(hostile, '7'));
    assert.deepEqual(result.snapshot, {
      metrics: [
        {
          name: 'vllm:omni_requests_success_total',
          kind: 'counter',
          description: 'Successes',
          unit: '',
          points: [{ attributes: { model_name: 'm', finished_reason: 'stop' }, value: 7, startTime: 100 }],
        },
        { name: LATENCY, kind: 'histogram', description: 'E2E latency', unit: '', points: [] },
        { name: 'vllm:num_requests_running', kind: 'gauge', description: 'Running', unit: '', points: [{ attributes: { model_name: 'm' }, value: null }] },
      ],
    });
    assert.deepEqual(result.dropped, [
      'vllm:omni_requests_success_total: 2 point(s) dropped (attributes that are not a map of strings, numbers or booleans)',
      `${LATENCY}: 1 point(s) dropped (a histogram value that is not an object)`,
    ]);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0] as string,
      /^omni-otel-metrics: cluster worker 7 sent points the primary cannot merge; they are left out, the rest is served: vllm:omni_requests_success_total: 2 point/,
    );
    // What is kept merges, retires and renders.
    const retired = retireSnapshot(EMPTY_SNAPSHOT, result.snapshot);
    const text = writeText(aggregateFamilies(mergeSnapshots(retired, [], SUM_ALL), []), { format: 'text', createdSeries: false });
    assert.match(text, /^vllm:omni_requests_success_total\{finished_reason="stop",model_name="m"\} 7\.0$/m);
  });

  it('a message with such a snapshot is still a protocol message (its ack and answer are not lost)', () => {
    assert.equal(isProtocolMessage({ omniOtelMetrics: 1, type: 'snapshot', seq: 3, snapshot: { metrics: [null, { name: 5 }] } }), true);
    assert.equal(isProtocolMessage({ omniOtelMetrics: 1, type: 'snapshot', seq: 3, snapshot: { metrics: 'x' } }), false);
  });

  it('counters must be finite and non-negative; gauges may be null (NaN over JSON); start times must be numbers', () => {
    const checker = new SnapshotChecker(CATALOG);
    const { result } = withWarnings(() =>
      checker.check({ metrics: [success(-1), success(null), success('3'), success(2, { model_name: ['m'] }), success(5)] }, '1'),
    );
    assert.deepEqual(
      result.snapshot.metrics.map((metric) => metric.points.map((point) => point.value)),
      [[], [], [], [], [5]],
    );
    const late = withWarnings(() => checker.check({ metrics: [{ ...(success(1) as object), points: [{ attributes: {}, value: 1, startTime: 'now' }] }] }, '1'));
    assert.deepEqual(late.result.dropped, ['vllm:omni_requests_success_total: 1 point(s) dropped (a start time that is not a number)']);
  });

  it('histograms: bounds are the primary catalog\u2019s; counts must be one per bucket and add up to the count; the sum finite', () => {
    const checker = new SnapshotChecker(CATALOG);
    const good = latency(LATENCY_BOUNDS, 3) as { points: Array<{ value: Record<string, unknown> }> };
    const variant = (change: Record<string, unknown>): unknown => ({
      ...good,
      points: [{ ...good.points[0], value: { ...good.points[0]?.value, ...change } }],
    });
    const cases: Array<[unknown, string | undefined]> = [
      [good, undefined],
      [latency([1, 5], 3), "bucket bounds other than the primary's"],
      [variant({ counts: [3] }), 'bucket counts that are not one count per bucket'],
      [variant({ count: 4 }), 'a count that is not the sum of the bucket counts'],
      [variant({ sum: null }), 'a sum that is not a finite number'],
      [variant({ counts: LATENCY_BOUNDS.map(() => 0).concat([-3]), count: -3 }), 'bucket counts that are not one count per bucket'],
    ];
    for (const [metric, problem] of cases) {
      const { result } = withWarnings(() => checker.check({ metrics: [metric] }, '2'));
      assert.equal(result.snapshot.metrics[0]?.points.length, problem === undefined ? 1 : 0, problem);
      if (problem !== undefined) assert.ok(result.dropped[0]?.includes(problem), `${result.dropped[0]} names ${problem}`);
    }
  });

  it('native buckets must count the observations the classic buckets count, at a schema Prometheus knows; exemplars must be a value, a time and a W3C trace', () => {
    const checker = new SnapshotChecker(CATALOG);
    const counts = new Array<number>(LATENCY_BOUNDS.length + 1).fill(0);
    counts[0] = 3;
    const exemplar = { value: 0.01, timestampSeconds: 1.7e9, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const native = { schema: 3, zeroThreshold: 2 ** -128, zeroCount: 1, positive: { offset: -60, counts: [2] }, negative: { offset: 0, counts: [] } };
    const exemplars = counts.map((_, i) => (i === 0 ? exemplar : null));
    const point = (value: object, extra: object = {}) => ({
      attributes: { model_name: 'm' },
      value: { boundaries: LATENCY_BOUNDS, counts, sum: 0.03, count: 3, ...value },
      ...extra,
    });
    const sent = {
      metrics: [
        {
          name: LATENCY,
          kind: 'histogram',
          description: 'E2E latency',
          unit: '',
          points: [
            point({ native, exemplars }),
            point({ native: { ...native, zeroCount: 2 } }),
            point({ native: { ...native, schema: 9 } }),
            point({ exemplars: exemplars.map((one) => (one === null ? null : { ...one, traceId: '"} injected' })) }),
            point({ exemplars: exemplars.slice(1) }),
          ],
        },
        { ...(success(1) as object), points: [{ attributes: { model_name: 'm' }, value: 1, exemplar: { ...exemplar, spanId: '0000000000000000' } }] },
      ],
    };
    const { result, warnings } = withWarnings(() => checker.check(sent, '4'));
    assert.deepEqual(result.snapshot.metrics[0]?.points, [
      { attributes: { model_name: 'm' }, value: { boundaries: LATENCY_BOUNDS, counts, sum: 0.03, count: 3, native, exemplars } },
    ]);
    assert.deepEqual(result.snapshot.metrics[1]?.points, []);
    assert.deepEqual(result.dropped, [
      `${LATENCY}: 4 point(s) dropped (native buckets that are not a schema, a zero bucket and runs counting the same observations)`,
      'vllm:omni_requests_success_total: 1 point(s) dropped (an exemplar that is not a value, a time and a W3C trace)',
    ]);
    assert.equal(warnings.length, 1);
  });

  it('a worker with other bucket bounds is left out before and after it exits: the aggregated count never goes backwards', () => {
    const checker = new SnapshotChecker(CATALOG);
    const arrive = (metric: unknown, worker: string): ClusterSnapshot => withWarnings(() => checker.check({ metrics: [metric] }, worker)).result.snapshot;
    const deviating = arrive(latency([1, 5], 500), '1');
    const live = [arrive(latency(LATENCY_BOUNDS, 1500), '2'), arrive(latency(LATENCY_BOUNDS, 2000), '3')];
    assert.equal(latencyCount(mergeSnapshots(EMPTY_SNAPSHOT, [deviating, ...live], SUM_ALL)), 3500);
    const retired = retireSnapshot(EMPTY_SNAPSHOT, deviating);
    assert.equal(latencyCount(mergeSnapshots(retired, live, SUM_ALL)), 3500, 'its exit changes nothing');
    // Unchecked, the exited worker's bounds came first and the live workers' 3500 were dropped.
    const unchecked = retireSnapshot(EMPTY_SNAPSHOT, { metrics: [latency([1, 5], 500)] } as ClusterSnapshot);
    assert.equal(latencyCount(withWarnings(() => mergeSnapshots(unchecked, live, SUM_ALL)).result), 500);
  });

  it('a stream outside the catalog is fixed by its first snapshot: kind and bounds', () => {
    const checker = new SnapshotChecker(CATALOG);
    const own = (kind: string, bounds: number[]): unknown => ({
      name: 'app_latency',
      kind,
      description: '',
      unit: 's',
      points:
        kind === 'histogram'
          ? [{ attributes: {}, value: { boundaries: bounds, counts: bounds.map(() => 1).concat([1]), sum: 1, count: bounds.length + 1 } }]
          : [{ attributes: {}, value: 1 }],
    });
    const first = withWarnings(() => checker.check({ metrics: [own('histogram', [1, 2])] }, '1')).result;
    assert.equal(first.snapshot.metrics[0]?.points.length, 1);
    const other = withWarnings(() => checker.check({ metrics: [own('histogram', [1, 3]), own('counter', [])] }, '2')).result;
    assert.deepEqual(other.dropped, [
      "app_latency: 1 point(s) dropped (bucket bounds other than the primary's [1, 2])",
      'app_latency: a counter here, a histogram for the primary',
    ]);
    const catalogKind = withWarnings(() => checker.check({ metrics: [{ ...(success(1) as object), kind: 'gauge' }] }, '2')).result;
    assert.deepEqual(catalogKind.dropped, ['vllm:omni_requests_success_total: a gauge here, a counter for the primary']);
  });

  it(`pins at most ${MAX_PINNED_STREAMS} streams outside the catalog`, () => {
    const checker = new SnapshotChecker(CATALOG);
    const metrics = Array.from({ length: MAX_PINNED_STREAMS + 2 }, (_, i) => ({ name: `s${i}`, kind: 'gauge', description: '', unit: '', points: [] }));
    const { result } = withWarnings(() => checker.check({ metrics }, '1'));
    assert.equal(result.snapshot.metrics.length, MAX_PINNED_STREAMS);
    assert.equal(result.dropped.length, 2);
  });

  it('property: whatever a worker sends, checking, merging, retiring and rendering never throw, and counts never go backwards', () => {
    const declared = declaredFamilies(CATALOG, 'm');
    const value = fc.oneof(
      fc.constant(null),
      fc.double(),
      fc.integer({ min: -2, max: 5 }),
      fc.string({ maxLength: 2 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
    );
    const exemplar = fc.oneof(
      value,
      fc.record({
        value: value,
        timestampSeconds: value,
        traceId: fc.oneof(fc.constant('4bf92f3577b34da6a3ce929d0e0e4736'), fc.string({ maxLength: 40 }), value),
        spanId: fc.oneof(fc.constant('00f067aa0ba902b7'), fc.string({ maxLength: 20 }), value),
      }),
    );
    const run = fc.oneof(value, fc.record({ offset: value, counts: fc.oneof(value, fc.array(fc.nat(3), { maxLength: 4 })) }));
    const native = fc.oneof(value, fc.record({ schema: value, zeroThreshold: value, zeroCount: value, positive: run, negative: run }));
    const histogramValue = fc.record(
      {
        boundaries: fc.oneof(fc.constant(LATENCY_BOUNDS), fc.array(fc.double(), { maxLength: 3 }), value),
        counts: fc.oneof(fc.array(fc.nat(4), { minLength: LATENCY_BOUNDS.length + 1, maxLength: LATENCY_BOUNDS.length + 1 }), value),
        sum: value,
        count: value,
        native,
        exemplars: fc.oneof(value, fc.array(exemplar, { minLength: LATENCY_BOUNDS.length + 1, maxLength: LATENCY_BOUNDS.length + 1 })),
      },
      { requiredKeys: ['boundaries', 'counts', 'sum', 'count'] },
    );
    const point = fc.oneof(
      fc.record(
        {
          attributes: fc.oneof(fc.constant({ model_name: 'm' }), fc.dictionary(fc.string({ maxLength: 2 }), value), value),
          value: fc.oneof(value, histogramValue),
          startTime: fc.oneof(fc.constant(undefined), value),
          exemplar,
        },
        { requiredKeys: ['attributes', 'value', 'startTime'] },
      ),
      value,
    );
    const metric = fc.oneof(
      fc.record({
        name: fc.constantFrom(LATENCY, 'vllm:omni_requests_success_total', 'vllm:num_requests_running', 'app_x', ''),
        kind: fc.constantFrom('counter', 'gauge', 'updowncounter', 'histogram', 'summary'),
        description: fc.oneof(fc.string({ maxLength: 3 }), value),
        unit: fc.oneof(fc.constant(''), value),
        points: fc.oneof(fc.array(point, { maxLength: 4 }), value),
      }),
      value,
    );
    const snapshot = fc.oneof(fc.record({ metrics: fc.array(metric, { maxLength: 4 }) }), value, fc.anything());
    fc.assert(
      fc.property(fc.array(snapshot, { minLength: 1, maxLength: 4 }), (sent) => {
        withWarnings(() => {
          const checker = new SnapshotChecker(CATALOG);
          const checked = sent.map((raw, i) => checker.check(raw, String(i)).snapshot);
          let retired = EMPTY_SNAPSHOT;
          let previous = latencyCount(mergeSnapshots(retired, checked, SUM_ALL)) ?? 0;
          for (let exited = 0; exited < checked.length; exited++) {
            retired = retireSnapshot(retired, checked[exited] as ClusterSnapshot);
            const merged = mergeSnapshots(retired, checked.slice(exited + 1), SUM_ALL);
            const count = latencyCount(merged) ?? 0;
            assert.ok(count >= previous, `${count} >= ${previous}`);
            previous = count;
            const families = aggregateFamilies(merged, declared);
            writeText(families, { format: 'text', createdSeries: true });
            writeText(families, { format: 'openmetrics', createdSeries: true });
            writeProtobuf(families, { createdSeries: true });
          }
        });
      }),
      { numRuns: 300, seed: 8 },
    );
  });
});
