import assert from 'node:assert/strict';
import fc from 'fast-check';
import { renderStore } from '../../support/exposition';
import { registerOmniMetrics } from '../../../register';
import { StageReplicaMap } from '../../../views/stage-replica-map';
import { parseSamples, seriesOf } from '../../support/exposition';
import { expectPrinted } from '../../support/console-capture';
import { fixedClockStore, withWarnings } from './store-fixture';

describe('series store: binding', () => {
  it('binds by family key with the label values in the family\u2019s order; the same values give the same series', () => {
    const store = fixedClockStore();
    const a = store.bind('upstream.requestSuccess', ['m', '1', '0', 'stop']);
    assert.equal(store.bind('upstream.requestSuccess', ['m', '1', '0', 'stop']), a);
    assert.notEqual(store.bind('upstream.requestSuccess', ['m', '1', '0', 'length']), a);
    assert.deepEqual(
      store.family('upstream.requestSuccess')?.series.map((s) => s.attributes),
      [
        { model_name: 'm', stage: '1', replica: '0', finished_reason: 'stop' },
        { model_name: 'm', stage: '1', replica: '0', finished_reason: 'length' },
      ],
    );
  });

  it('a wrong number of label values, or extra labels on a family that is not an info family, is a programming error', () => {
    const store = fixedClockStore();
    assert.throws(() => store.bind('upstream.requestSuccess', ['m', '1', '0']), {
      name: 'RangeError',
      message: 'vllm:request_success_total takes 4 label values (model_name, stage, replica, finished_reason); got 3',
    });
    assert.throws(() => store.bind('upstream.numRequestsRunning', ['m', '0', '0'], { x: '1' }), TypeError);
  });

  it('families this configuration does not register bind to a shared no-op series', () => {
    const store = fixedClockStore({ logStats: false });
    const series = store.bind('upstream.promptTokens', ['m', '0', '0']);
    series.record(5);
    assert.equal(store.has('upstream.promptTokens'), false);
    assert.equal(store.family('upstream.promptTokens'), undefined);
  });

  it('bindAttributes applies the engine → (stage, replica) processor once, when the series is bound', () => {
    const store = fixedClockStore({ logStats: true }, { stageReplicaMap: new StageReplicaMap([1, 2, 1]) });
    const series = store.bindAttributes('upstream.generationTokens', { model_name: 'm', engine: '2' });
    assert.equal(series, store.bind('upstream.generationTokens', ['m', '1', '1']));
    const info = store.bindAttributes('upstream.cacheConfigInfo', { engine: 0, block_size: '16' });
    assert.deepEqual(store.family('upstream.cacheConfigInfo')?.series[0]?.attributes, { block_size: '16', stage: '0', replica: '0' });
    assert.equal(info, store.bind('upstream.cacheConfigInfo', ['0', '0'], { block_size: '16' }));
  });

  it('past the cardinality limit every new label set lands in one overflow series that keeps model_name, with one warning', () => {
    const store = fixedClockStore({ logStats: true }, { cardinalityLimit: 3 });
    const { warnings } = withWarnings(() => {
      for (let i = 0; i < 10; i++) store.bind('upstream.requestSuccess', ['m', String(i), '0', 'stop']).record(1);
    });
    const family = store.family('upstream.requestSuccess');
    assert.equal(family?.series.length, 4, 'three label sets and the overflow series');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /vllm:request_success_total holds 3 series \(its cardinality limit\)/);
    const text = renderStore(store, { format: 'text', createdSeries: false }).toString();
    assert.ok(text.includes('vllm:request_success_total{model_name="m",otel_metric_overflow="true"} 7.0\n'), 'seven overflowed records, none lost');
    assert.equal(seriesOf(text, 'vllm:request_success_total').length, 4);
    assert.equal(
      store.bind('upstream.requestSuccess', ['m', '1', '0', 'stop']),
      store.bind('upstream.requestSuccess', ['m', '1', '0', 'stop']),
      'existing series stay their own',
    );
  });

  it('rejects a cardinality limit that is not a positive integer', () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) assert.throws(() => fixedClockStore({}, { cardinalityLimit: limit }), RangeError);
  });

  it('property: any label values render escaped once and parse back to themselves', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ maxLength: 30 }), (model, reason) => {
        const store = fixedClockStore();
        store.bind('upstream.requestSuccess', [model, '0', '0', reason]).record(2);
        const samples = parseSamples(renderStore(store, { format: 'text', createdSeries: false }).toString('utf8')).filter(
          (sample) => sample.name === 'vllm:request_success_total',
        );
        assert.deepEqual(
          samples.map((s) => [s.labels, s.value]),
          [[{ model_name: model, stage: '0', replica: '0', finished_reason: reason }, 2]],
        );
      }),
    );
  });

  it('100k distinct stage names, scraped every 1000: the family stays at its cap, nothing is lost, every scrape stays small', async function () {
    this.timeout(60_000);
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, exporters: [], logIntervalSeconds: 0 });
    try {
      let largestScrape = 0;
      // Said once, when the cap is reached.
      await expectPrinted(
        [
          /^omni-otel-metrics: vllm:omni_audio_ttfp_s holds 2000 series \(its cardinality limit\); further label sets are recorded in one series labelled otel_metric_overflow="true"/,
        ],
        async () => {
          for (let i = 0; i < 100_000; i++) {
            // Label values from the host: one new stage name per request.
            handle.audio.observeAudioTtfp(`stage-${i}`, 0, 0.1);
            if (i % 1000 === 999) {
              largestScrape = Math.max(largestScrape, (await handle.prometheusReader?.metricsBytes('text'))?.length ?? 0);
            }
          }
        },
      );
      const family = handle.store.family('pipeline.audioTtfp');
      assert.equal(family?.series.length, 2000 + 1, 'the cap (2000) and one overflow series');
      const text = await handle.metricsText();
      const overflow = parseSamples(text).find((s) => s.name === 'vllm:omni_audio_ttfp_s_count' && s.labels.otel_metric_overflow === 'true');
      assert.deepEqual(overflow?.labels, { model_name: 'm', otel_metric_overflow: 'true' });
      assert.equal(overflow?.value, 100_000 - 2000, 'every observation past the cap is counted in the overflow series');
      assert.ok(largestScrape < 8 * 2 ** 20, `every scrape stays small (${largestScrape} bytes)`);
    } finally {
      await handle.shutdown();
    }
  });
});
