import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { OmniInstrumentation } from '../../../instrumentation/hooks/omni-instrumentation';
import { resolveRequestLabels } from '../../../instrumentation/recorders/request-labels';
import { parseExposition } from '../../../exporters/engine-pull/exposition-parser';
import { renderStore } from '../../support/exposition';
import { registerOmniMetrics } from '../../../register';
import { OmniOptionError } from '../../../views/common/option-checks';
import { validateMetricsConfig } from '../../../views/catalog/metrics-config';
import { isWellFormedText, wellFormedText } from '../../../views/common/well-formed-text';
import { parseSamples, sampleValue, type Sample } from '../../support/exposition';
import { fixedClockStore } from './store-fixture';
import { needPeer } from '../../support/peers/need-peer';
import { expectPrinted } from '../../support/console-capture';
import { debianPython } from '../../support/python-parity';

/** The five values of a probe: three lone surrogates alone, two after an `a`. */
const LONE = ['\uD800', '\uDBFF', '\uDC00', 'a\uD83D', 'a\uDE00'];

/** prometheus_client's own parsers over the exposition (the OpenMetrics one refuses a label set printed twice in a family). */
function pythonSampleCount(text: string, format: 'text' | 'openmetrics'): number {
  const script = join(__dirname, '..', '..', 'recorders', 'fixtures', 'parse_exposition.py');
  return Number(execFileSync(debianPython(), [script, format], { input: text, encoding: 'utf8' }));
}

/** Samples printed twice with the same name and label set. */
function duplicates(samples: readonly Sample[]): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const sample of samples) {
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) twice.push(key);
    seen.add(key);
  }
  return twice;
}

/** A string of UTF-16 code units mixing lone surrogates, pairs, the escaped characters and plain text. */
const awkwardText = fc
  .array(fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D\uDE00', 'a', 'é', '"', '\\', '\n', '\uFFFD'), { maxLength: 5 })
  .map((units) => units.join(''));

describe('label values are well-formed text before they are a series', function () {
  needPeer('debian-prometheus-client', this);
  this.timeout(60_000);

  it('wellFormedText replaces each lone surrogate with U+FFFD and leaves pairs and other text as they are', () => {
    assert.deepEqual(LONE.map(wellFormedText), ['\uFFFD', '\uFFFD', '\uFFFD', 'a\uFFFD', 'a\uFFFD']);
    assert.equal(wellFormedText('\uD83D\uDE00 ok'), '\uD83D\uDE00 ok');
    assert.equal(wellFormedText('\uDE00\uD83D'), '\uFFFD\uFFFD');
    assert.deepEqual([isWellFormedText('a\uD83D\uDE00'), isWellFormedText('a\uD83D')], [true, false]);
  });

  it('five tenants that differ only in lone surrogates are the two series they print as, with all five requests counted', async () => {
    const metrics = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      logStats: true,
      logIntervalSeconds: 0,
      prometheus: false,
      exporters: [],
      processMetrics: false,
      selfCheck: false,
      requestLabels: [{ name: 'tenant', from: (request) => request.user, maxValues: 10 }],
    });
    // Fed through its observer by hand: no host class to hook, which it says.
    const inst = await expectPrinted(
      [/^omni-otel-metrics: OmniInstrumentation was given no host classes: /],
      () => new OmniInstrumentation({ metrics, diagnosticsChannels: false }),
    );
    inst.enable();
    try {
      LONE.forEach((user, i) => {
        const requestId = `r${i}`;
        const token = inst.observer.generateStarted(requestId, { requestId, user });
        inst.observer.generateOutput(token, { requestId, stageId: 0, replicaId: 0, finalOutputType: 'text', finished: true, finishReason: 'stop' });
        inst.observer.generateEnded(token, 'completed');
      });
      const text = await metrics.metricsText();
      const openMetrics = await metrics.metricsText('openmetrics');
      const success = (tenant: string) => sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop', tenant });
      assert.deepEqual([success('\uFFFD'), success('a\uFFFD')], [3, 2]);
      assert.deepEqual(duplicates(parseSamples(text)), []);
      assert.equal(Buffer.from(text, 'utf8').toString('utf8'), text, 'the exposition survives a UTF-8 round trip unchanged');
      // Both of prometheus_client's parsers read every sample (the OpenMetrics one refuses a label set printed twice).
      assert.equal(pythonSampleCount(text, 'text'), parseSamples(text).length);
      assert.equal(pythonSampleCount(openMetrics, 'openmetrics'), parseSamples(openMetrics.replace(/^# EOF\n$/m, '')).length);
    } finally {
      inst.disable();
      await metrics.shutdown();
    }
  });

  it('a model name and an info family label (a cache config field) are made well-formed the same way, at the store every recorder binds through', async () => {
    const store = fixedClockStore({ logStats: true });
    store.bind('upstream.requestSuccess', ['m\uD800', '0', '0', 'stop']).record(1);
    store.bind('upstream.requestSuccess', ['m\uDC00', '0', '0', 'stop']).record(1);
    const info = store.bind('upstream.cacheConfigInfo', ['0', '0'], { cache_dtype: 'a\uD800' });
    assert.equal(store.bind('upstream.cacheConfigInfo', ['0', '0'], { cache_dtype: 'a\uDFFF' }), info);
    assert.deepEqual(store.family('upstream.cacheConfigInfo')?.series[0]?.attributes, { cache_dtype: 'a\uFFFD', stage: '0', replica: '0' });
    info.record(1);
    const text = renderStore(store, { format: 'text', createdSeries: false }).toString('utf8');
    assert.equal(sampleValue(text, 'vllm:request_success_total', { model_name: 'm\uFFFD', stage: '0', replica: '0', finished_reason: 'stop' }), 2);
    assert.equal(sampleValue(text, 'vllm:cache_config_info', { cache_dtype: 'a\uFFFD', stage: '0', replica: '0' }), 1);
  });

  it('engine-pull labels: an engine answer is decoded as UTF-8 (no lone surrogate survives), and two samples that then print alike are refused', () => {
    const answer = Buffer.concat([
      Buffer.from('# TYPE x counter\nx_total{a="'),
      Buffer.from([0xff]),
      Buffer.from('"} 1\nx_total{a="'),
      Buffer.from([0xfe]),
      Buffer.from('"} 2\n'),
    ]);
    assert.throws(() => parseExposition(answer.toString('utf8')), /^ExpositionParseError: line 3: duplicate sample x_total with the same labels$/);
  });

  it('options with lone surrogates are refused where they are declared: request label values and custom family help', () => {
    assert.throws(
      () => resolveRequestLabels([{ name: 'tenant', from: () => 'x', values: ['ok', 'a\uD800'] }], 2000),
      (error: unknown) =>
        error instanceof OmniOptionError &&
        error.option === 'requestLabels[0].values[1]' &&
        error.message ===
          'omni-otel-metrics: requestLabels[0].values[1] must be a non-empty string of at most 128 characters, without lone surrogates; got the string "a\\ud800"',
    );
    assert.throws(
      () => validateMetricsConfig({ families: [{ name: 'tts_hits_total', type: 'counter', help: 'Hits \uDC00.' }] }, 'metrics.yaml'),
      /^MetricsConfigError: metrics.yaml: family "tts_hits_total": help contains a lone surrogate \(half of a UTF-16 pair\), which UTF-8 cannot encode$/,
    );
  });

  it('property: any label values, lone surrogates included, print as distinct valid label sets, one per well-formed value, with every record counted', () => {
    const printed: string[] = [];
    fc.assert(
      fc.property(fc.array(awkwardText, { minLength: 1, maxLength: 12 }), (values) => {
        const store = fixedClockStore({ logStats: true });
        for (const value of values) store.bind('upstream.requestSuccess', ['m', '0', '0', value]).record(1);
        const text = renderStore(store, { format: 'text', createdSeries: false }).toString('utf8');
        const samples = parseSamples(text).filter((sample) => sample.name === 'vllm:request_success_total');
        assert.deepEqual(duplicates(samples), []);
        const expected = new Map<string, number>();
        for (const value of values) expected.set(wellFormedText(value), (expected.get(wellFormedText(value)) ?? 0) + 1);
        assert.deepEqual(new Map(samples.map((sample) => [sample.labels.finished_reason as string, sample.value])), expected);
        assert.equal(Buffer.from(text, 'utf8').toString('utf8'), text);
        if (printed.length < 20) printed.push(renderStore(store, { format: 'openmetrics', createdSeries: true }).toString('utf8'));
      }),
      { numRuns: 300 },
    );
    // prometheus_client's OpenMetrics parser (which refuses a label set printed twice) over a sample of them.
    for (const openMetrics of printed) assert.equal(pythonSampleCount(openMetrics, 'openmetrics'), parseSamples(openMetrics.replace(/^# EOF\n$/m, '')).length);
  });
});
