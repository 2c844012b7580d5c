import assert from 'node:assert/strict';
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import { resolveCatalog } from '../../../views/catalog/catalog';
import { exemplarsOf } from '../../../views/store/exemplar-series';
import { SeriesStore } from '../../../views/store/series-store';

const SPAN: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };

function exemplarStore(): SeriesStore {
  return new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm', exemplars: true, now: () => 1_700_000_000_000 });
}

/** The trace ids of a series' kept exemplars, in slot order. */
function keptTraces(series: object): string[] {
  return (exemplarsOf(series)?.all() ?? []).flatMap((exemplar) => (exemplar === undefined ? [] : [exemplar.traceId]));
}

describe('the exemplar scope of a store', () => {
  it("a request trace named on one store is taken by that store's records only, never by another handle's", () => {
    const named = exemplarStore();
    const other = exemplarStore();
    const namedSeries = named.bind('upstream.requestSuccess', ['m', '0', '0', 'stop']);
    const otherSeries = other.bind('upstream.requestSuccess', ['m', '0', '0', 'stop']);
    const previous = named.exemplarScope?.enter(SPAN);
    namedSeries.record(1);
    // No span is active here: outside its own scope, the other store finds no trace.
    otherSeries.record(1);
    named.exemplarScope?.leave(previous);
    assert.deepEqual(keptTraces(namedSeries), [SPAN.traceId]);
    assert.deepEqual(keptTraces(otherSeries), []);
  });

  it('a store without exemplars has no scope to name a trace in', () => {
    const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm' });
    assert.equal(store.exemplarScope, undefined);
    assert.equal(exemplarsOf(store.bind('upstream.requestSuccess', ['m', '0', '0', 'stop'])), undefined);
  });
});
