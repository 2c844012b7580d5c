import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { renderStore } from '../../support/exposition';
import { requestTraceOf } from '../../../instrumentation/pipeline/request-trace';
import { resolveCatalog } from '../../../views/catalog/catalog';
import { exemplarsOf } from '../../../views/store/exemplar-series';
import { ExemplarTrace, ownedExemplarTrace } from '../../../views/store/exemplar-trace-ids';
import { SeriesStore } from '../../../views/store/series-store';
import { needPeer } from '../../support/peers/need-peer';
import { measureMemoryQuietly } from '../../hooks/collect-garbage';
import { debianPython } from '../../support/python-parity';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

function exemplarStore(): SeriesStore {
  return new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm', exemplars: true, now: () => 1_700_000_000_000 });
}

/** The OpenMetrics exposition of the store's `vllm:request_success_total` samples (where a counter's exemplar goes). */
function successLines(store: SeriesStore): string[] {
  const text = renderStore(store, { format: 'openmetrics', createdSeries: false }).toString('utf8');
  return text.split('\n').filter((line) => line.startsWith('vllm:request_success_total'));
}

/** prometheus_client's OpenMetrics parser over the whole exposition: the sample count, or its error. */
function pythonParse(store: SeriesStore): string {
  const text = renderStore(store, { format: 'openmetrics', createdSeries: true }).toString('utf8');
  const script = join(__dirname, '..', '..', 'recorders', 'fixtures', 'parse_exposition.py');
  try {
    return execFileSync(debianPython(), [script, 'openmetrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    return `error: ${String((error as { stderr?: string }).stderr)}`;
  }
}

/** Records 1 into `vllm:request_success_total` while `spanContext` is the active span. */
function recordWithin(store: SeriesStore, spanContext: SpanContext): void {
  const series = store.bind('upstream.requestSuccess', ['m', '0', '0', 'stop']);
  context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext), () => series.record(1));
}

/** The JS heap once the collector has run (`measureMemory` with `eager` collects first, as no flag is needed for it). */
async function heapAfterCollection(): Promise<number> {
  const measured = await measureMemoryQuietly({ mode: 'summary', execution: 'eager' });
  return (measured as { total: { jsMemoryEstimate: number } }).total.jsMemoryEstimate;
}

describe('exemplar trace ids: W3C lowercase hex, copied when recorded, checked when printed', function () {
  needPeer('debian-prometheus-client', this);
  this.timeout(60_000);
  before(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
  after(() => context.disable());

  it('a span context changed after the record (a trace id with `"}` and a newline) leaves the printed exemplar as recorded', () => {
    const store = exemplarStore();
    const mutable = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED };
    recordWithin(store, mutable);
    mutable.traceId = 'abc"} 1 2\nvllm:fake_total 1';
    mutable.spanId = 'x';
    const [line] = successLines(store);
    assert.match(
      line ?? '',
      /^vllm:request_success_total\{[^}]*\} 1\.0 # \{span_id="00f067aa0ba902b7",trace_id="4bf92f3577b34da6a3ce929d0e0e4736"\} 1\.0 \d+\.\d+$/,
    );
    assert.match(pythonParse(store), /^\d+$/);
  });

  it('ids that are not W3C ids are not printed, even when they reach a slot: the check is made where exemplars are printed', () => {
    const store = exemplarStore();
    const series = store.bind('upstream.requestSuccess', ['m', '0', '0', 'stop']);
    // An `ExemplarTrace` is taken as it is (it was checked when made); one made by hand with bad ids still prints nothing.
    const previous = store.exemplarScope?.enter(new ExemplarTrace('abc"} 1 2\nvllm:fake_total 1', SPAN_ID));
    series.record(1);
    store.exemplarScope?.leave(previous);
    assert.deepEqual(exemplarsOf(series)?.all(), [undefined]);
    assert.deepEqual(successLines(store), ['vllm:request_success_total{finished_reason="stop",model_name="m",replica="0",stage="0"} 1.0']);
  });

  it('uppercase ids of a foreign span context print lowercase, as W3C trace context writes them', () => {
    const store = exemplarStore();
    recordWithin(store, { traceId: TRACE_ID.toUpperCase(), spanId: SPAN_ID.toUpperCase(), traceFlags: TraceFlags.SAMPLED });
    assert.match(successLines(store)[0] ?? '', / # \{span_id="00f067aa0ba902b7",trace_id="4bf92f3577b34da6a3ce929d0e0e4736"\} 1\.0 /);
    assert.deepEqual(
      { ...ownedExemplarTrace({ traceId: 'ABCDEF'.padEnd(32, '1'), spanId: 'F'.repeat(16), traceFlags: 1 }) },
      {
        traceFlags: 1,
        traceId: 'abcdef'.padEnd(32, '1'),
        spanId: 'f'.repeat(16),
      },
    );
  });

  it('property: whatever ids a span context has, and however they change after the record, the exposition parses and prints only W3C ids', () => {
    const id = (length: number) =>
      fc.oneof(
        fc.stringMatching(new RegExp(`^[0-9a-fA-F]{${length}}$`)),
        fc.string({ maxLength: length + 2 }),
        fc.constantFrom('abc"} 1 2\nvllm:fake_total 1', '0'.repeat(length), `${'a'.repeat(length - 1)}\n`, `${'a'.repeat(length - 1)}"`),
      );
    const stores: SeriesStore[] = [];
    fc.assert(
      fc.property(id(32), id(16), id(32), id(16), (traceId, spanId, laterTraceId, laterSpanId) => {
        const store = exemplarStore();
        const spanContext = { traceId, spanId, traceFlags: TraceFlags.SAMPLED };
        recordWithin(store, spanContext);
        spanContext.traceId = laterTraceId;
        spanContext.spanId = laterSpanId;
        const [line] = successLines(store);
        const exemplar = / # \{span_id="([^"]*)",trace_id="([^"]*)"\}/.exec(line ?? '');
        const valid = /^[0-9a-f]{32}$/i.test(traceId) && /^[0-9a-f]{16}$/i.test(spanId) && !/^0+$/.test(traceId) && !/^0+$/.test(spanId);
        assert.deepEqual(exemplar?.slice(1), valid ? [spanId.toLowerCase(), traceId.toLowerCase()] : undefined);
        assert.equal(line?.split('\n').length, 1);
        if (stores.length < 10) stores.push(store);
      }),
      { numRuns: 300 },
    );
    for (const store of stores) assert.match(pythonParse(store), /^\d+$/);
  });

  it('20 requests with 5 MB version-01 traceparent headers: the exemplars they leave keep none of the headers alive', async () => {
    const store = exemplarStore();
    const before = await heapAfterCollection();
    for (let i = 0; i < 20; i++) {
      const traceId = `${String(i + 1).padStart(4, '0')}${TRACE_ID.slice(4)}`;
      // Version 01 may carry more fields after the flags: the ids are parsed out of the long header.
      const traceparent = `01-${traceId}-${SPAN_ID}-01-${'x'.repeat(5 * 1024 * 1024)}`;
      const requestTrace = requestTraceOf({ requestId: `r${i}`, traceparent });
      assert.equal(requestTrace?.traceId, traceId);
      const series = store.bind('upstream.requestSuccess', ['m', '0', String(i), 'stop']);
      const previous = store.exemplarScope?.enter(requestTrace);
      series.record(1);
      store.exemplarScope?.leave(previous);
    }
    const retained = (await heapAfterCollection()) - before;
    // The 20 headers are 100 MiB: kept by sliced ids, the heap grows by that much (100.2 MiB measured
    // before the ids were copied). The bound leaves room for what other tests of the same process
    // release or allocate meanwhile (up to 5 MiB seen); three kept headers would pass it, four would not.
    assert.ok(retained < 20 * 1024 * 1024, `${(retained / 1024 / 1024).toFixed(1)} MiB retained`);
    assert.equal(successLines(store).filter((line) => line.includes(' # {span_id="00f067aa0ba902b7",trace_id="')).length, 20);
  });
});
