import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { oneOutputServing } from '../support/one-output-serving';
import { quietHandle } from '../support/quiet-handle';
import { resolveCatalog } from '../../views/catalog/catalog';
import { exemplarsOf } from '../../views/store/exemplar-series';
import { exemplarClock } from '../../views/store/exemplar-scope';
import { SeriesStore } from '../../views/store/series-store';

const M = 'm';
const SPAN: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };
const TRACEPARENT = `00-${SPAN.traceId}-${SPAN.spanId}-01`;

/** Replaces the exemplar clock's reading with one that counts its calls, for the duration of `run`. */
async function countingClockReads(run: () => Promise<void> | void): Promise<number> {
  const saved = exemplarClock.nowMillis;
  let reads = 0;
  exemplarClock.nowMillis = () => {
    reads++;
    return saved();
  };
  try {
    await run();
  } finally {
    exemplarClock.nowMillis = saved;
  }
  return reads;
}

/** The exemplar lines (`… # {ids} value timestamp`) of one family in OpenMetrics text, as [value, timestamp]. */
function exemplarsIn(text: string, family: string): Array<[number, number]> {
  return text
    .split('\n')
    .filter((line) => line.startsWith(family) && line.includes(' # '))
    .map((line) => {
      const [, value, timestamp] = / # \{[^}]*\} (\S+) (\S+)$/.exec(line) ?? [];
      return [Number(value), Number(timestamp)];
    });
}

describe("exemplars take the clock reading their records' caller already took", () => {
  it('within a request scope, a shared reading stamps every exemplar and the clock is not read again', async () => {
    const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: M, exemplars: true });
    const e2e = store.bind('pipeline.e2eRequestLatency', [M]);
    const reads = await countingClockReads(() => {
      const previous = store.exemplarScope?.enter(SPAN);
      store.exemplarScope?.shareClockReading(12.5);
      e2e.record(0.25);
      e2e.record(3);
      store.exemplarScope?.leave(previous);
    });
    assert.equal(reads, 0);
    const kept = exemplarsOf(e2e)
      ?.all()
      .filter((exemplar) => exemplar !== undefined);
    const stamp = (exemplarClock.originMillis + 12_500) / 1000;
    assert.deepEqual(
      kept?.map((exemplar) => [exemplar.value, exemplar.timestampSeconds]),
      [
        [0.25, stamp],
        [3, stamp],
      ],
    );
  });

  it('outside a scope a shared reading is ignored: the record reads the clock itself', async () => {
    const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: M, exemplars: true });
    const e2e = store.bind('pipeline.e2eRequestLatency', [M]);
    const saved = exemplarClock.nowMillis;
    exemplarClock.nowMillis = () => 1_764_113_634_000;
    try {
      store.exemplarScope?.shareClockReading(12.5);
      const previous = store.exemplarScope?.enter(SPAN);
      store.exemplarScope?.leave(previous); // a scope left: the reading shared before it does not carry over
      const reads = await countingClockReads(() => {
        const inner = store.exemplarScope?.enter(SPAN);
        e2e.record(0.25);
        store.exemplarScope?.leave(inner);
      });
      assert.equal(reads, 1);
    } finally {
      exemplarClock.nowMillis = saved;
    }
    assert.equal(
      exemplarsOf(e2e)
        ?.all()
        .find((exemplar) => exemplar !== undefined)?.timestampSeconds,
      1_764_113_634,
    );
  });

  it("a served request's records reuse the serving observer's reading: no clock read for its exemplars", async () => {
    const handle = await quietHandle({
      stagePools: [1],
      logStats: true,
      exemplars: true,
    });
    const Serving = oneOutputServing();
    const instrumentation = new OmniInstrumentation({ metrics: handle, servingClass: Serving, diagnosticsChannels: false });
    let before = NaN;
    let after = NaN;
    try {
      const reads = await countingClockReads(async () => {
        before = (exemplarClock.originMillis + performance.now()) / 1000;
        for await (const output of new Serving().generate({ requestId: 'a', traceparent: TRACEPARENT })) assert.equal(output.finished, true);
        after = (exemplarClock.originMillis + performance.now()) / 1000;
      });
      assert.equal(reads, 0);
      const text = await handle.metricsText('openmetrics');
      const e2e = exemplarsIn(text, 'vllm:omni_e2e_request_latency_s_bucket');
      const success = exemplarsIn(text, 'vllm:omni_requests_success_total');
      assert.equal(e2e.length, 1);
      assert.equal(success.length, 1);
      const [[, e2eStamp = NaN] = []] = e2e;
      assert.ok(before <= e2eStamp && e2eStamp <= after, `${before} <= ${e2eStamp} <= ${after}`);
      assert.deepEqual(success[0], [1, e2eStamp], 'the counter and the histogram share the one reading');
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
