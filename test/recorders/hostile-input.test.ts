import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { parseSamples, type Sample } from '../support/exposition';
import { checkMetrics } from '../support/promtool';
import { withWarnings } from '../views/store/store-fixture';
import { needPeer } from '../support/peers/need-peer';
import { debianPython } from '../support/python-parity';

/** Whatever an untyped host might pass where a number or a label goes. */
const hostile = fc.oneof(
  fc.double(),
  fc.integer({ min: -3, max: 5 }),
  fc.constantFrom(undefined, null, Number.NaN, Infinity, -Infinity, -0, true, 2n ** 70n, Symbol('s')),
  fc.string({ maxLength: 12 }),
  fc.constant({
    valueOf: () => {
      throw new Error('valueOf');
    },
    toString: () => {
      throw new Error('toString');
    },
  }),
  fc.object({ maxDepth: 1 }),
);

type Call = (handle: OmniMetricsHandle) => unknown;

/** One call of a public recorder method with hostile arguments. */
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.tuple(hostile).map(
    ([v]) =>
      (h: OmniMetricsHandle) =>
        h.pipeline.setRunning(v as number),
  ),
  fc.tuple(hostile).map(
    ([v]) =>
      (h: OmniMetricsHandle) =>
        h.pipeline.setWaiting(v as number),
  ),
  fc.tuple(hostile, hostile).map(
    ([v, reason]) =>
      (h: OmniMetricsHandle) =>
        h.pipeline.requestSucceeded(v as number, reason as string),
  ),
  fc.constant((h: OmniMetricsHandle) => h.pipeline.requestFailed()),
  fc.tuple(hostile, hostile).map(
    ([p, g]) =>
      (h: OmniMetricsHandle) =>
        h.pipeline.observeTokens(p as number, g as number),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, r, v]) =>
      (h: OmniMetricsHandle) =>
        h.audio.observeAudioTtfp(s as number, r as number, v as number),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, r, v]) =>
      (h: OmniMetricsHandle) =>
        h.audio.observeAudioRtf(s as number, r as number, v as number),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, r, v]) =>
      (h: OmniMetricsHandle) =>
        h.audio.observeAudioUnderrun(s as number, r as number, v as number),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, r, v]) =>
      (h: OmniMetricsHandle) =>
        h.audio.incAudioContinuityOk(s as number, r as number, v as number),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, r, v]) =>
      (h: OmniMetricsHandle) =>
        h.audio.incAudioSkipped(s as number, r as number, v as string),
  ),
  fc.tuple(hostile).map(
    ([input]) =>
      (h: OmniMetricsHandle) =>
        h.audio.observeModalityAtFinalize(input as never),
  ),
  fc.tuple(hostile).map(
    ([input]) =>
      (h: OmniMetricsHandle) =>
        h.audio.observeAudioFirstPacket(input as never),
  ),
  fc.tuple(hostile).map(
    ([input]) =>
      (h: OmniMetricsHandle) =>
        h.audio.observeAudioStreamingFinalize(input as never),
  ),
  fc.tuple(hostile, hostile, hostile, hostile, hostile).map(
    ([a, b, c, d, v]) =>
      (h: OmniMetricsHandle) =>
        h.transfer.observeInFlightTime(a as number, b as number, c as number, d as number, v as number),
  ),
  fc.tuple(hostile).map(
    ([samples]) =>
      (h: OmniMetricsHandle) =>
        h.stageReplica.observe(samples as never),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, i, e]) =>
      (h: OmniMetricsHandle) =>
        h.statLogger?.record(s as never, i as never, e as number),
  ),
  fc.tuple(hostile, hostile, hostile).map(
    ([s, l, e]) =>
      (h: OmniMetricsHandle) =>
        h.statLogger?.recordSleepState(s as boolean, l as number, e as number),
  ),
);

/**
 * Histograms are consistent: buckets never decrease, `+Inf` equals `_count`; counters are finite
 * and not negative. OpenMetrics leaves out `_count` and `_sum` of a histogram whose sum is negative.
 */
function assertConsistent(samples: readonly Sample[], openMetrics = false): void {
  const series = new Map<string, Sample[]>();
  for (const sample of samples) {
    if (!sample.name.endsWith('_bucket')) continue;
    const { le: _le, ...labels } = sample.labels;
    const key = `${sample.name}${JSON.stringify(Object.entries(labels).sort())}`;
    series.set(key, [...(series.get(key) ?? []), sample]);
  }
  for (const [key, buckets] of series) {
    for (let i = 1; i < buckets.length; i++) assert.ok((buckets[i]?.value ?? 0) >= (buckets[i - 1]?.value ?? 0), `${key}: buckets never decrease`);
    const last = buckets.at(-1);
    assert.equal(last?.labels.le, '+Inf');
    const { le: _le, ...labels } = last?.labels ?? {};
    const count = samples.find(
      (s) =>
        s.name === last?.name.replace(/_bucket$/, '_count') &&
        JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()),
    );
    if (count === undefined && openMetrics) continue;
    assert.equal(count?.value, last?.value, `${key}: +Inf equals _count`);
  }
  for (const sample of samples) {
    if (sample.name.endsWith('_total')) assert.ok(Number.isFinite(sample.value) && sample.value >= 0, `${sample.name} ${sample.rawValue}`);
  }
}

describe('recorders under hostile input', function () {
  needPeer('debian-prometheus', this);
  needPeer('debian-prometheus-client', this);
  this.timeout(120_000);
  let handle: OmniMetricsHandle;
  /** Every 10th scrape of the property below (text, OpenMetrics), for the external parsers. */
  const checked: Array<[string, string]> = [];
  let runs = 0;
  before(async () => {
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      features: { specDecode: { numSpeculativeTokens: 2 }, kvConnector: 'nixl', lora: { maxLoras: 1 }, kvCacheMetrics: true, corruptedRequests: true },
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
    });
  });
  after(() => handle.shutdown());

  it('property: no sequence of calls throws, and every scrape parses, with consistent histograms and counters, in both formats', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 40 }), async (calls) => {
        withWarnings(() => {
          for (const c of calls) assert.doesNotThrow(() => c(handle));
        });
        const text = await handle.metricsText();
        assertConsistent(parseSamples(text));
        const openMetrics = await handle.metricsText('openmetrics');
        assert.ok(openMetrics.endsWith('# EOF\n'));
        assertConsistent(parseSamples(openMetrics.replace(/^# EOF\n$/m, '')), true);
        if (runs++ % 10 === 0) checked.push([text, openMetrics]);
      }),
      { numRuns: 150 },
    );
  });

  it('property: a counter equals the sum of its valid increments, whatever else arrives', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(hostile, fc.double({ min: 0.5, max: 1e6, noNaN: true })), { maxLength: 60 }), async (values) => {
        const fresh = await registerOmniMetrics({
          modelName: 'm',
          stagePools: [1],
          logStats: true,
          prometheus: false,
          exporters: [],
          logIntervalSeconds: 0,
          processMetrics: false,
          selfCheck: false,
        });
        try {
          withWarnings(() => {
            for (const value of values) {
              fresh.audio.incAudioFrames(0, 0, value as number);
              fresh.pipeline.observeTokens(value as number, 1);
            }
          });
          // Valid: a number above zero that leaves the total finite (an overflowing one is refused, not added).
          const expected = values.reduce<number>((total, v) => (typeof v === 'number' && v > 0 && total + v < Infinity ? total + v : total), 0);
          const samples = parseSamples(await fresh.metricsText());
          const value = (name: string) => samples.find((s) => s.name === name)?.value ?? 0;
          assert.equal(value('vllm:omni_audio_frames_total'), expected);
          assert.equal(value('vllm:omni_prompt_tokens_total'), expected);
          assert.equal(value('vllm:omni_generation_tokens_total'), values.length, 'the valid argument of each call is kept');
        } finally {
          await fresh.shutdown();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('promtool and Python prometheus_client\u2019s text and OpenMetrics parsers (independent implementations) accept every 10th hostile scrape', async () => {
    assert.ok(checked.length >= 10);
    for (const [text, openMetrics] of checked) {
      const result = await checkMetrics(text);
      assert.equal(result.parseError, undefined, result.raw);
      assert.equal(pythonParse('text', text), parseSamples(text).length, 'text: every sample parsed');
      assert.equal(pythonParse('openmetrics', openMetrics), parseSamples(openMetrics.replace(/^# EOF\n$/m, '')).length, 'OpenMetrics: every sample parsed');
    }
  });
});

/** Samples in an exposition, as Python prometheus_client's own parser reads it (throws on a parse error). */
function pythonParse(format: 'text' | 'openmetrics', text: string): number {
  return Number(execFileSync(debianPython(), [join(__dirname, 'fixtures', 'parse_exposition.py'), format], { input: text, encoding: 'utf8' }));
}

describe('configuration and indices from outside', () => {
  it('cacheConfig keys that cannot be label names are refused at registration, naming the key', async () => {
    for (const [key, message] of [
      ['', /cacheConfig key "" is not usable as a label name/],
      ['a.b', /cacheConfig key "a\.b"/],
      ['__name__', /cacheConfig key "__name__"/],
      ['stage', /cacheConfig key "stage"/],
      ['le', /cacheConfig key "le"/],
    ] as const) {
      await assert.rejects(
        registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, exporters: [], cacheConfig: { [key]: 1 }, selfCheck: false }),
        message,
      );
    }
    await assert.rejects(
      registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        logStats: true,
        prometheus: false,
        exporters: [],
        cacheConfig: { block_size: Number.NaN },
        selfCheck: false,
      }),
      /cacheConfig\.block_size must be a string, finite number, boolean or null/,
    );
  });

  it('an engine index that is not an integer in the map records nothing and pollutes nothing', async () => {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
    });
    try {
      const before = await handle.metricsText();
      withWarnings(() => {
        for (const engine of ['length', '__proto__', 'constructor', '1', 1.5, -1, 3, Number.NaN]) {
          assert.doesNotThrow(() => handle.statLogger?.record({ numRunningReqs: 7 } as never, null, engine as number));
          assert.doesNotThrow(() => handle.statLogger?.recordSleepState(true, 1, engine as number));
        }
      });
      assert.equal(await handle.metricsText(), before);
      assert.equal(Object.prototype.hasOwnProperty.call(Array.prototype, 'running'), false);
      assert.equal(({} as Record<string, unknown>).running, undefined);
    } finally {
      await handle.shutdown();
    }
  });
});
