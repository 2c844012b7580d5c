import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { context, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { exemplarText } from '../../exporters/exposition/exemplar-text';
import { renderStore, storeProtobuf } from '../support/exposition';
import { decodeMetricFamilies, type DecodedExemplar } from '../support/prometheus-protobuf';
import { requestTraceOf } from '../../instrumentation/pipeline/request-trace';
import { resolveCatalog, type FamilyKey, type ResolvedCatalog } from '../../views/catalog/catalog';
import { TIME_TO_FIRST_TOKEN_BUCKETS } from '../../views/catalog/buckets';
import { keepsExemplars } from '../../views/catalog/exemplar-families';
import { ExemplarCounterSeries, ExemplarHistogramSeries, exemplarsOf } from '../../views/store/exemplar-series';
import { exemplarClock, type ExemplarScope } from '../../views/store/exemplar-scope';
import { tracingRegistered } from '../../views/store/exemplar-trace';
import type { LabelValue } from '../../views/store/family-series';
import { CounterSeries, HistogramSeries, type BoundSeries } from '../../views/store/series';
import { resolveNativeHistograms } from '../../views/store/native-histogram-settings';
import { SeriesStore } from '../../views/store/series-store';
import { allowPrinted } from '../support/console-capture';
import { needPeer } from '../support/peers/need-peer';
import { debianPython } from '../support/python-parity';

const RENDER = join(__dirname, 'fixtures', 'exemplar_render.py');
const M = 'Qwen/Qwen3-Omni';

const KEYS: ReadonlySet<FamilyKey> = new Set<FamilyKey>(['upstream.requestSuccess', 'upstream.timeToFirstTokenSeconds', 'pipeline.requestsFailed']);

function spanContext(i: number, sampled = true): SpanContext {
  return {
    traceId: `4bf92f3577b34da6a3ce929d0e0e${String(4700 + i).padStart(4, '0')}`,
    spanId: `00f067aa0ba9${String(1000 + i).padStart(4, '0')}`,
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
  };
}

function catalogOf(keys: ReadonlySet<FamilyKey>): ResolvedCatalog {
  const full = resolveCatalog({ logStats: true });
  const families = full.families.filter((family) => keys.has(family.key));
  return { prefix: full.prefix, families, byKey: (key) => families.find((f) => f.key === key), byName: (name) => families.find((f) => f.name === name) };
}

interface Operation {
  readonly family: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly op: 'create' | 'record';
  readonly value?: number;
  readonly exemplar?: Readonly<Record<string, string>>;
}

/**
 * One scenario recorded in a store and written down for prometheus_client. Both read one clock
 * (whole milliseconds, so a double prints the same in both languages): at each series' creation
 * and at each observation made within a trace.
 */
function scenario(exemplars: boolean): { store: SeriesStore; python: object } {
  const clock: string[] = [];
  let tick = 0;
  const read = (): number => {
    const millis = 1764113634000 + 1234 * tick++;
    clock.push((millis / 1000).toString());
    return millis;
  };
  const catalog = catalogOf(KEYS);
  const store = new SeriesStore(catalog, { modelName: M, now: read, exemplars });
  const operations: Operation[] = [];
  const bind = (key: FamilyKey, values: readonly LabelValue[]) => {
    const family = store.family(key);
    assert.ok(family);
    const before = family.series.length;
    const series = store.bind(key, values);
    const labels: Record<string, string> = {};
    family.family.labels.forEach((name, i) => (labels[name] = String(values[i])));
    if (family.series.length > before) operations.push({ family: family.family.name, labels, op: 'create' });
    return (value: number, traced?: SpanContext) => {
      const previous = store.exemplarScope?.enter(traced);
      series.record(value);
      store.exemplarScope?.leave(previous);
      const exemplar = traced === undefined ? undefined : { trace_id: traced.traceId, span_id: traced.spanId };
      operations.push({ family: family.family.name, labels, op: 'record', value, exemplar });
    };
  };
  const saved = exemplarClock.nowMillis;
  exemplarClock.nowMillis = read;
  try {
    const ttft = bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']);
    const stop = bind('upstream.requestSuccess', [M, '0', '0', 'stop']);
    bind('upstream.requestSuccess', [M, '0', '0', 'length']); // never recorded: no exemplar
    const failed = bind('pipeline.requestsFailed', [M, 'client_abort']);
    ttft(0.03, spanContext(1));
    ttft(0.031, spanContext(2)); // same bucket: the later one is kept
    ttft(0.3); // no trace: counted, no exemplar
    ttft(5000, spanContext(3)); // +Inf bucket
    ttft(0.001, spanContext(4)); // on a bound
    stop(1, spanContext(5));
    stop(2); // the counter's exemplar stays the traced increment's
    failed(1, spanContext(6));
  } finally {
    exemplarClock.nowMillis = saved;
  }
  const families = catalog.families.map((family) => ({
    name: family.name,
    type: family.type,
    help: family.help,
    labelnames: family.labels,
    buckets: family.buckets,
  }));
  return { store, python: { families, operations, clock } };
}

function openMetrics(store: SeriesStore): string {
  return renderStore(store, { format: 'openmetrics', createdSeries: true }).toString('utf8');
}

function python(args: string[], input: string): string {
  return execFileSync(debianPython(), args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

describe('exemplars', function () {
  needPeer('debian-prometheus-client', this);
  it('OpenMetrics: byte-identical to prometheus_client 0.16 rendering the same observations with the same exemplars', () => {
    const { store, python: input } = scenario(true);
    const ours = openMetrics(store);
    assert.equal(ours, python([RENDER], JSON.stringify(input)));
    // Spot check of the shape, so a failure above is readable.
    assert.ok(
      ours.includes(
        'vllm:time_to_first_token_seconds_bucket{le="0.04",model_name="Qwen/Qwen3-Omni",replica="0",stage="0"} 3.0 # {span_id="00f067aa0ba91002",trace_id="4bf92f3577b34da6a3ce929d0e0e4702"} 0.031 1764113640.17\n',
      ),
      ours,
    );
  });

  it("prometheus_client's OpenMetrics parser reads every exemplar back: trace ids, span ids, values", () => {
    const { store } = scenario(true);
    const script = [
      'import sys, json',
      'from prometheus_client.openmetrics.parser import text_string_to_metric_families',
      'out = []',
      'for f in text_string_to_metric_families(sys.stdin.read()):',
      '    for s in f.samples:',
      '        if s.exemplar: out.append([s.name, s.labels.get("le"), s.exemplar.labels["trace_id"], s.exemplar.labels["span_id"], s.exemplar.value])',
      'print(json.dumps(out))',
    ].join('\n');
    const parsed = JSON.parse(python(['-c', script], openMetrics(store))) as unknown[];
    const id = (i: number) => [spanContext(i).traceId, spanContext(i).spanId];
    assert.deepEqual(parsed, [
      ['vllm:omni_requests_failed_total', null, ...id(6), 1],
      ['vllm:request_success_total', null, ...id(5), 1],
      ['vllm:time_to_first_token_seconds_bucket', '0.001', ...id(4), 0.001],
      ['vllm:time_to_first_token_seconds_bucket', '0.04', ...id(2), 0.031],
      ['vllm:time_to_first_token_seconds_bucket', '+Inf', ...id(3), 5000],
    ]);
  });

  it('the protobuf exposition carries the same exemplars on buckets and counters (what Prometheus with native histograms scrapes)', () => {
    const { store } = scenario(true);
    const script = [
      'import sys, json',
      'from prometheus_client.openmetrics.parser import text_string_to_metric_families',
      'out = []',
      'for f in text_string_to_metric_families(sys.stdin.read()):',
      '    for s in f.samples:',
      '        if s.exemplar: out.append([f.name, s.labels.get("le"), s.exemplar.labels["trace_id"], s.exemplar.labels["span_id"], s.exemplar.value, float(s.exemplar.timestamp)])',
      'print(json.dumps(out))',
    ].join('\n');
    const expected = JSON.parse(python(['-c', script], openMetrics(store))) as Array<[string, string | null, string, string, number, number]>;
    const decoded: Array<[string, string | null, string, string, number, number]> = [];
    const label = (exemplar: DecodedExemplar, name: string): string => exemplar.label.find((one) => one.name === name)?.value ?? '';
    const push = (family: string, le: string | null, exemplar: DecodedExemplar | undefined) => {
      if (exemplar === undefined) return;
      const seconds = (exemplar.timestamp?.seconds ?? 0) + (exemplar.timestamp?.nanos ?? 0) / 1e9;
      decoded.push([family, le, label(exemplar, 'trace_id'), label(exemplar, 'span_id'), exemplar.value ?? NaN, seconds]);
      assert.deepEqual(
        exemplar.label.map((one) => one.name),
        ['span_id', 'trace_id'],
      );
    };
    for (const family of decodeMetricFamilies(storeProtobuf(store))) {
      const name = family.name.replace(/_total$/, '');
      for (const metric of family.metric) {
        push(name, null, metric.counter?.exemplar);
        for (const bucket of metric.histogram?.bucket ?? []) {
          const bound = bucket.upperBound === Infinity ? '+Inf' : String(bucket.upperBound);
          push(name, bound, bucket.exemplar);
        }
      }
    }
    const sorted = (rows: Array<[string, string | null, string, string, number, number]>) => rows.map((row) => JSON.stringify(row.slice(0, 5))).sort();
    assert.deepEqual(sorted(decoded), sorted(expected));
    assert.equal(decoded.length, 5);
    for (const row of decoded) {
      const twin = expected.find((one) => one[2] === row[2]);
      assert.ok(twin !== undefined && Math.abs(twin[5] - row[5]) < 1e-6, `timestamp of ${row[2]}`);
    }
  });

  it('the 0.0.4 text is byte-identical with exemplars on and off, and OpenMetrics carries none when off', () => {
    const on = scenario(true).store;
    const off = scenario(false).store;
    const text = (store: SeriesStore) => renderStore(store, { format: 'text', createdSeries: true }).toString('utf8');
    assert.equal(text(on), text(off));
    assert.ok(!openMetrics(off).includes(' # {'));
    assert.ok(openMetrics(on).includes(' # {'));
  });

  it('off: every series is the plain class (the record path is the one it always was)', () => {
    const store = new SeriesStore(catalogOf(KEYS), { modelName: M });
    const ttft = store.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']);
    const success = store.bind('upstream.requestSuccess', [M, '0', '0', 'stop']);
    assert.equal(Object.getPrototypeOf(ttft), HistogramSeries.prototype);
    assert.equal(Object.getPrototypeOf(success), CounterSeries.prototype);
    assert.equal(exemplarsOf(ttft), undefined);
    const on = new SeriesStore(catalogOf(KEYS), { modelName: M, exemplars: true });
    assert.ok(on.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']) instanceof ExemplarHistogramSeries);
    assert.ok(on.bind('upstream.requestSuccess', [M, '0', '0', 'stop']) instanceof ExemplarCounterSeries);
  });

  it('on: a series makes its slots at its first record within a trace, one per bucket and +Inf (a counter one); records without a trace make none', () => {
    const catalog = catalogOf(KEYS);
    const store = new SeriesStore(catalog, { modelName: M, exemplars: true });
    const ttft = store.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']);
    const success = store.bind('upstream.requestSuccess', [M, '0', '0', 'stop']);
    const nativeHistograms = resolveNativeHistograms({ families: ['vllm:time_to_first_token_seconds'] }, catalog);
    const nativeStore = new SeriesStore(catalog, { modelName: M, exemplars: true, nativeHistograms });
    const native = nativeStore.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']);
    for (const series of [ttft, success, native]) series.record(0.2);
    assert.deepEqual([exemplarsOf(ttft), exemplarsOf(success), exemplarsOf(native)], [undefined, undefined, undefined]);
    const within = (series: BoundSeries, scope: ExemplarScope | undefined) => {
      const previous = scope?.enter(spanContext(3));
      series.record(0.2);
      scope?.leave(previous);
    };
    within(ttft, store.exemplarScope);
    within(success, store.exemplarScope);
    within(native, nativeStore.exemplarScope);
    assert.deepEqual(
      [ttft, success, native].map((series) => [
        exemplarsOf(series)?.size,
        exemplarsOf(series)
          ?.all()
          .filter((exemplar) => exemplar !== undefined).length,
      ]),
      [
        [23, 1],
        [1, 1],
        [23, 1],
      ],
    );
  });

  it('property: whatever values arrive, traced or not, a series holds slots exactly once an accepted record was traced, and each slot the last traced value', async () => {
    const catalog = catalogOf(KEYS);
    const nativeHistograms = resolveNativeHistograms({ families: ['vllm:time_to_first_token_seconds'] }, catalog);
    const hostile = fc.oneof(
      fc.double(),
      fc.constantFrom(0, -0, 1e308, -1e308, Number.MAX_VALUE),
      fc.constantFrom<unknown>(undefined, null, '0.5', 10n, Symbol('x'), {}),
    );
    const operation = fc.record({ kind: fc.constantFrom('histogram', 'counter', 'native'), value: hostile, traced: fc.boolean() });
    await allowPrinted([/histogram takes finite values|counter takes finite increments|would no longer be finite/], () =>
      fc.assert(
        fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
          const plain = new SeriesStore(catalog, { modelName: M, exemplars: true });
          const native = new SeriesStore(catalog, { modelName: M, exemplars: true, nativeHistograms });
          const target = {
            histogram: { store: plain, series: plain.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']), bounds: TIME_TO_FIRST_TOKEN_BUCKETS },
            counter: { store: plain, series: plain.bind('upstream.requestSuccess', [M, '0', '0', 'stop']), bounds: [] },
            native: { store: native, series: native.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']), bounds: TIME_TO_FIRST_TOKEN_BUCKETS },
          };
          // The model: the totals each series would accept, and per slot the last traced value with its trace.
          const totals = { histogram: 0, counter: 0, native: 0 };
          const expected = {
            histogram: new Map<number, [number, string]>(),
            counter: new Map<number, [number, string]>(),
            native: new Map<number, [number, string]>(),
          };
          operations.forEach(({ kind, value, traced }, i) => {
            const { store, series, bounds } = target[kind];
            const trace = spanContext(i + 1);
            const previous = traced ? store.exemplarScope?.enter(trace) : undefined;
            series.record(value as number);
            if (traced) store.exemplarScope?.leave(previous);
            if (typeof value !== 'number') return;
            const total = totals[kind] + value;
            // A counter keeps an exemplar when its total moved: an increment the total absorbs (1e-308 + 5e-324) keeps none.
            const accepted = kind === 'counter' ? value > 0 && total < Infinity && total !== totals.counter : Number.isFinite(total);
            if (!accepted) return;
            totals[kind] = total;
            const bucket = kind === 'counter' ? 0 : bounds.findIndex((bound) => value <= bound);
            if (traced) expected[kind].set(bucket === -1 ? bounds.length : bucket, [value, trace.traceId]);
          });
          for (const kind of ['histogram', 'counter', 'native'] as const) {
            const slots = exemplarsOf(target[kind].series);
            if (expected[kind].size === 0) {
              assert.equal(slots, undefined, kind);
              continue;
            }
            const kept = (slots?.all() ?? []).flatMap((exemplar, slot) => (exemplar === undefined ? [] : [[slot, exemplar.value, exemplar.traceId]]));
            assert.deepEqual(
              kept,
              [...expected[kind]].sort(([a], [b]) => a - b).map(([slot, [value, traceId]]) => [slot, value, traceId]),
              kind,
            );
          }
        }),
        { numRuns: 200 },
      ),
    );
  });

  it('which families keep them: latency histograms and request counters, not token histograms, gauges or process families', () => {
    const catalog = resolveCatalog({ logStats: true, processMetrics: true });
    const keeping = catalog.families.filter(keepsExemplars).map((family) => family.name);
    for (const name of [
      'vllm:time_to_first_token_seconds',
      'vllm:inter_token_latency_seconds',
      'vllm:e2e_request_latency_seconds',
      'vllm:request_queue_time_seconds',
      'vllm:request_prefill_time_seconds',
      'vllm:request_decode_time_seconds',
      'vllm:omni_audio_ttfp_s',
      'vllm:omni_stage_gen_time_s',
      'vllm:omni_transfer_tx_s',
      'vllm:omni_diffusion_exec_s',
      'vllm:request_success_total',
      'vllm:omni_requests_success_total',
      'vllm:omni_requests_failed_total',
    ]) {
      assert.ok(keeping.includes(name), name);
    }
    for (const name of ['vllm:request_prompt_tokens', 'vllm:num_requests_running', 'vllm:prompt_tokens_total', 'process_cpu_seconds_total']) {
      assert.ok(!keeping.includes(name), name);
    }
  });

  it('a record takes the active span when no request trace is named; unsampled and invalid spans give none', () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const store = new SeriesStore(catalogOf(KEYS), { modelName: M, exemplars: true });
      const series = store.bind('upstream.timeToFirstTokenSeconds', [M, '0', '0']);
      context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext(7, false)), () => series.record(0.2));
      context.with(trace.setSpanContext(ROOT_CONTEXT, { ...spanContext(8), traceId: '0'.repeat(32) }), () => series.record(0.2));
      assert.deepEqual(
        exemplarsOf(series)
          ?.all()
          .filter((exemplar) => exemplar !== undefined) ?? [],
        [],
      );
      context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext(9)), () => series.record(0.2));
      const slots = exemplarsOf(series);
      assert.ok(slots);
      const kept = slots.all().filter((exemplar) => exemplar !== undefined);
      assert.equal(kept.length, 1);
      assert.equal(kept[0]?.traceId, spanContext(9).traceId);
      assert.equal(kept[0]?.value, 0.2);
      // A named request trace wins over the active context.
      context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext(9)), () => {
        const previous = store.exemplarScope?.enter(spanContext(10));
        assert.equal(store.exemplarScope?.current()?.spanId, spanContext(10).spanId);
        store.exemplarScope?.leave(previous);
      });
    } finally {
      context.disable();
    }
  });

  it("a request's trace: the active span at generate, else its traceparent (sampled only)", () => {
    const traceparent = `00-${spanContext(1).traceId}-${spanContext(1).spanId}-01`;
    assert.deepEqual({ ...requestTraceOf({ requestId: 'a', traceparent }) }, spanContext(1));
    assert.equal(requestTraceOf({ requestId: 'a', traceparent: traceparent.replace(/-01$/, '-00') }), undefined);
    assert.equal(requestTraceOf({ requestId: 'a' }), undefined);
    assert.equal(requestTraceOf(undefined), undefined);
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext(2)), () =>
        assert.equal(requestTraceOf({ requestId: 'a', traceparent })?.spanId, spanContext(2).spanId),
      );
    } finally {
      context.disable();
    }
  });

  it('any traceparent text: never throws, and only a well-formed sampled one is taken', () => {
    const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));
    fc.assert(
      fc.property(fc.string(), (text) => {
        const found = requestTraceOf({ traceparent: text });
        assert.ok(found === undefined || /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(text.trim()));
      }),
    );
    fc.assert(
      fc.property(hex(32), hex(16), fc.boolean(), (traceId, spanId, sampled) => {
        fc.pre(!/^0+$/.test(traceId) && !/^0+$/.test(spanId));
        const found = requestTraceOf({ traceparent: `00-${traceId}-${spanId}-0${sampled ? 1 : 0}` });
        assert.deepEqual(found && { ...found }, sampled ? { traceId, spanId, traceFlags: TraceFlags.SAMPLED } : undefined);
      }),
    );
  });

  it('the default follows tracing: off with the no-op tracer provider, on once one is registered', () => {
    assert.equal(tracingRegistered(), false);
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    try {
      assert.equal(tracingRegistered(), true);
    } finally {
      trace.disable();
    }
    assert.equal(tracingRegistered(), false);
  });

  it('exemplar text: prometheus_client number and timestamp forms', () => {
    const ids = { traceId: spanContext(1).traceId, spanId: spanContext(1).spanId };
    assert.equal(exemplarText(undefined), '');
    assert.equal(exemplarText({ ...ids, value: 1, timestampSeconds: 1764113634 }), ` # {span_id="${ids.spanId}",trace_id="${ids.traceId}"} 1.0 1764113634.0`);
    assert.equal(
      exemplarText({ ...ids, value: 2.5e-5, timestampSeconds: 1764113634.5 }),
      ` # {span_id="${ids.spanId}",trace_id="${ids.traceId}"} 2.5e-05 1764113634.5`,
    );
  });
});
