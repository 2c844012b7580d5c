import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';
import { PipelineObserver } from '../../instrumentation/pipeline/pipeline-observer';
import { recordersOf } from '../../instrumentation/recorders/recorders';
import type { OmniMetricsHandle } from '../../register';
import { resolveOmniSettings } from '../../settings';
import { OmniOptionError } from '../../views/common/option-checks';
import type { SloOptions } from '../../views/catalog/slo-families';
import { histogramOf, parseSamples, sampleValue } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';
import { quietHandle } from '../support/quiet-handle';

const GOOD = 'vllm:omni_requests_good_total';
const MISSES = 'vllm:omni_slo_misses_total';
const SUCCESS = 'vllm:omni_requests_success_total';
const TENANTS = ['acme', 'globex', 'initech'] as const;
const SAMPLE_RATE = 24000;
/** Samples in each audio chunk the requests stream. */
const CHUNK_FRAMES = 480;

/** The observer's clock (`performance.now()`) set by hand for the duration of `work`. */
async function withClock<T>(work: (set: (seconds: number) => void) => Promise<T>): Promise<T> {
  let now = 0;
  const stub = performance as unknown as { now: () => number };
  stub.now = () => now * 1000;
  try {
    return await work((seconds) => {
      now = seconds;
    });
  } finally {
    delete (stub as { now?: unknown }).now;
  }
}

/** One generated request: when its outputs arrive (ms after its start) and how it ends. */
interface PlannedRequest {
  readonly tenant: (typeof TENANTS)[number];
  readonly firstMs: number;
  readonly e2eMs: number;
  readonly tokens: number;
  /** Audio: the first packet's time (at or after the first output), the frames and the final stage's generation time. */
  readonly audio: { readonly ttfpMs: number; readonly frames: number; readonly genMs: number } | null;
  /** `failed`: the stream ends without its finished output. */
  readonly end: 'stop' | 'length' | 'abort' | 'error' | 'failed';
}

const plannedRequest: fc.Arbitrary<PlannedRequest> = fc
  .record({
    tenant: fc.constantFrom(...TENANTS),
    firstMs: fc.integer({ min: 0, max: 3000 }),
    extraMs: fc.integer({ min: 0, max: 6000 }),
    tokens: fc.integer({ min: 0, max: 40 }),
    audio: fc.option(
      fc.record({
        afterFirst: fc.float({ min: 0, max: 1, noNaN: true }),
        frames: fc.integer({ min: 0, max: 96_000 }),
        genMs: fc.integer({ min: 0, max: 8000 }),
      }),
    ),
    end: fc.constantFrom('stop', 'stop', 'stop', 'length', 'abort', 'error', 'failed'),
  })
  .map(({ tenant, firstMs, extraMs, tokens, audio, end }) => ({
    tenant,
    firstMs,
    e2eMs: firstMs + extraMs,
    tokens,
    audio: audio && { ttfpMs: firstMs + Math.floor(audio.afterFirst * extraMs), frames: audio.frames, genMs: audio.genMs },
    end,
  }));

/** Any of the five objectives, each present or not, in the ranges the requests span. */
const objectives: fc.Arbitrary<SloOptions> = fc
  .record(
    {
      firstOutputSeconds: fc.double({ min: 0.01, max: 3.5, noNaN: true }),
      e2eSeconds: fc.double({ min: 0.01, max: 9, noNaN: true }),
      tpotSeconds: fc.double({ min: 0.001, max: 1, noNaN: true }),
      audioTtfpSeconds: fc.double({ min: 0.01, max: 9, noNaN: true }),
      audioRtf: fc.double({ min: 0.01, max: 3, noNaN: true }),
    },
    { requiredKeys: [] },
  )
  .filter((slo) => Object.keys(slo).length > 0);

/** The outputs a planned request yields, with their times (ms after its start), in order. */
function outputsOf(id: string, request: PlannedRequest): Array<[number, OmniRequestOutput]> {
  const text = (finished: boolean): OmniRequestOutput => ({ requestId: id, stageId: 0, replicaId: 0, finalOutputType: 'text', finished, text: 'x' });
  const chunk = (finished: boolean): OmniRequestOutput => ({
    requestId: id,
    stageId: 2,
    replicaId: 0,
    finalOutputType: 'audio',
    finished,
    multimodalOutput: { audio: new Int16Array(CHUNK_FRAMES) },
  });
  const { audio } = request;
  const timeline: Array<[number, OmniRequestOutput]> = [];
  if (audio === null || audio.ttfpMs > request.firstMs) timeline.push([request.firstMs, text(false)]);
  if (audio !== null) timeline.push([audio.ttfpMs, chunk(false)]);
  if (request.end === 'failed') return timeline;
  // The talker's codec tokens are no output tokens of the answer: only the first stage's count.
  const stageMetrics = [
    { stageId: 0, numTokensOut: request.tokens },
    ...(audio === null
      ? []
      : [
          { stageId: 1, numTokensOut: 7 * request.tokens + 3 },
          { stageId: 2, stageGenTimeMs: audio.genMs, audioGeneratedFrames: audio.frames },
        ]),
  ];
  const last = audio === null ? text(true) : chunk(true);
  timeline.push([request.e2eMs, { ...last, finishReason: request.end, stageMetrics }]);
  return timeline;
}

/**
 * What the request should count as, worked out from the plan on its own: the objectives it
 * missed (vLLM's rule: at or below the threshold meets it; tpot from 2 tokens; audio ones only with
 * audio), or undefined when it did not finish successfully and is judged on nothing.
 */
function expectedMisses(request: PlannedRequest, start: number, slo: SloOptions): string[] | undefined {
  if (request.end !== 'stop' && request.end !== 'length') return undefined;
  const since = (ms: number): number => start + ms / 1000 - start;
  const first = since(request.firstMs);
  const e2e = since(request.e2eMs);
  const missed: string[] = [];
  const miss = (threshold: number | undefined, value: number | undefined, objective: string): void => {
    if (threshold !== undefined && value !== undefined && value > threshold) missed.push(objective);
  };
  miss(slo.firstOutputSeconds, first, 'first_output');
  miss(slo.e2eSeconds, e2e, 'e2e');
  miss(slo.tpotSeconds, request.tokens >= 2 ? (e2e - first) / (request.tokens - 1) : undefined, 'tpot');
  const audio = request.audio;
  miss(slo.audioTtfpSeconds, audio === null ? undefined : since(audio.ttfpMs), 'audio_ttfp');
  // No frames reported: they are counted from the final output's chunk, as `audio_rtf` counts them.
  const frames = audio === null ? 0 : audio.frames || CHUNK_FRAMES;
  miss(slo.audioRtf, audio === null ? undefined : audio.genMs / 1000 / (frames / SAMPLE_RATE), 'audio_rtf');
  return missed;
}

/** Sum of the samples of `name` whose labels include `match`. */
function total(text: string, name: string, match: Record<string, string>, exclude: (labels: Record<string, string>) => boolean = () => false): number {
  return parseSamples(text)
    .filter((sample) => sample.name === name && Object.entries(match).every(([key, value]) => sample.labels[key] === value) && !exclude(sample.labels))
    .reduce((sum, sample) => sum + sample.value, 0);
}

const unsuccessful = (labels: Record<string, string>): boolean => labels.finished_reason === 'abort' || labels.finished_reason === 'error';

/** Serves `requests` one after the other through a pipeline observer of `handle`, on a clock of its own; each carries `traceparent` when given. */
async function serve(handle: OmniMetricsHandle, requests: readonly PlannedRequest[], traceparent?: string): Promise<number[]> {
  const observer = new PipelineObserver(recordersOf(handle), handle.stageReplicaMap, { exemplarScope: handle.store.exemplarScope });
  return withClock(async (setClock) => {
    const starts: number[] = [];
    requests.forEach((request, i) => {
      const start = 1000 + i * 10.37;
      starts.push(start);
      setClock(start);
      const id = `r${i}`;
      const token = observer.generateStarted(id, { requestId: id, tenant: request.tenant, ...(traceparent === undefined ? {} : { traceparent }) });
      for (const [ms, output] of outputsOf(id, request)) {
        setClock(start + ms / 1000);
        observer.generateOutput(token, output);
      }
      observer.generateEnded(token, request.end === 'failed' ? 'failed' : 'completed');
    });
    return starts;
  });
}

describe('goodput: the slo option', function () {
  this.timeout(120_000);

  it('without slo neither family is registered; with it both are, each HELP naming the option the thresholds come from', async () => {
    const without = await quietHandle({ logStats: true });
    const text = await without.metricsText();
    await without.shutdown();
    assert.deepEqual(
      without.catalog.families.filter((family) => family.group === 'slo'),
      [],
    );
    assert.ok(!text.includes('requests_good') && !text.includes('slo_misses'));
    assert.equal(without.slo, undefined);

    const handle = await quietHandle({ logStats: true, slo: { e2eSeconds: 5, audioRtf: 1 } });
    const lines = (await handle.metricsText()).split('\n');
    await handle.shutdown();
    const at = lines.indexOf(
      `# HELP ${GOOD} Requests that finished successfully and met every objective that applies to them, against the thresholds of the slo option (audio objectives only for requests with audio).`,
    );
    assert.ok(at >= 0);
    // Zero series from the start, `_created` as every counter prints it: a rate sees the first request, and attainment exists before any request was good.
    assert.deepEqual(lines.slice(at + 1, at + 3), [`# TYPE ${GOOD} counter`, `${GOOD}{model_name="m"} 0.0`]);
    assert.match(lines[at + 5] ?? '', /^vllm:omni_requests_good_created\{model_name="m"\} \d\.\d+e\+09$/);
    assert.ok(
      lines.includes(
        `# HELP ${MISSES} Objectives missed by requests that finished successfully, one per objective a request missed, against the thresholds of the slo option.`,
      ),
    );
    assert.deepEqual(
      lines.filter((line) => line.startsWith(`${MISSES}{`)),
      [`${MISSES}{model_name="m",objective="e2e"} 0.0`, `${MISSES}{model_name="m",objective="audio_rtf"} 0.0`],
    );
  });

  it('an slo object whose reading throws is refused as the option, with the error as its cause; a later change to the object changes nothing', async () => {
    const hostile = Object.defineProperty({}, 'e2eSeconds', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    assert.throws(
      () => resolveOmniSettings({ modelName: 'm', slo: hostile }),
      (error: unknown) => {
        assert.ok(error instanceof OmniOptionError);
        assert.deepEqual([error.option, error.message, (error.cause as Error).message], ['slo', 'omni-otel-metrics: getter', 'getter']);
        return true;
      },
    );
    const slo = { e2eSeconds: 1 };
    const handle = await quietHandle({ logStats: true, slo });
    try {
      slo.e2eSeconds = 100;
      handle.slo?.requestFinished(undefined, 'stop', { firstOutputSeconds: 0.1, e2eSeconds: 2, outputTokens: 3 });
      assert.equal(sampleValue(await handle.metricsText(), MISSES, { model_name: 'm', objective: 'e2e' }), 1);
    } finally {
      await handle.shutdown();
    }
  });

  it("judges a request on the values the other families record: with an e2e objective on a bucket bound, good = that bucket's count", async () => {
    const handle = await quietHandle({ logStats: true, slo: { e2eSeconds: 0.5 } });
    try {
      const e2es = [0.1, 0.5, 0.50001, 2, 0.25, 7, 0.49999];
      await serve(
        handle,
        e2es.map((seconds) => ({ tenant: 'acme', firstMs: 0, e2eMs: seconds * 1000, tokens: 3, audio: null, end: 'stop' })),
      );
      const text = await handle.metricsText();
      const e2e = histogramOf(text, 'vllm:omni_e2e_request_latency_s', { model_name: 'm' });
      const withinBound = e2e?.buckets.find(([le]) => le === '0.5')?.[1];
      assert.equal(withinBound, 4);
      assert.equal(sampleValue(text, GOOD, { model_name: 'm' }), withinBound);
      assert.equal(sampleValue(text, MISSES, { model_name: 'm', objective: 'e2e' }), (e2e?.count ?? NaN) - withinBound);
    } finally {
      await handle.shutdown();
    }
  });

  it("vLLM's rule: a value at the threshold meets it; tpot only from 2 output tokens; audio objectives only for requests with audio", async () => {
    const handle = await quietHandle({ logStats: true, slo: { firstOutputSeconds: 0.25, tpotSeconds: 0.125, audioTtfpSeconds: 1, audioRtf: 0.5 } });
    try {
      const slo = handle.slo;
      assert.ok(slo);
      // At every threshold exactly: (0.5 - 0.25) / (3 - 1) = 0.125.
      slo.requestFinished(undefined, 'stop', { firstOutputSeconds: 0.25, e2eSeconds: 0.5, outputTokens: 3, audioTtfpSeconds: 1, audioRtf: 0.5 });
      // One token, no audio: only the first output applies.
      slo.requestFinished(undefined, 'length', { firstOutputSeconds: 0.1, e2eSeconds: 60, outputTokens: 1 });
      // Just over every threshold: four misses, one request.
      slo.requestFinished(undefined, 'stop', {
        firstOutputSeconds: 0.2500001,
        e2eSeconds: 1,
        outputTokens: 3,
        audioTtfpSeconds: 1.0000001,
        audioRtf: 0.5000001,
      });
      // Not finished successfully: judged on nothing.
      slo.requestFinished(undefined, 'abort', { firstOutputSeconds: 9, e2eSeconds: 9, outputTokens: 9 });
      slo.requestFinished(undefined, 'error', { firstOutputSeconds: 9, e2eSeconds: 9, outputTokens: 9 });
      const text = await handle.metricsText();
      assert.equal(sampleValue(text, GOOD, { model_name: 'm' }), 2);
      for (const objective of ['first_output', 'tpot', 'audio_ttfp', 'audio_rtf'])
        assert.equal(sampleValue(text, MISSES, { model_name: 'm', objective }), 1, objective);
    } finally {
      await handle.shutdown();
    }
  });

  it('per tenant: a tenant whose every request missed has a good series at 0, so its attainment is 0, not absent', async () => {
    const handle = await quietHandle({
      logStats: true,
      slo: { e2eSeconds: 1 },
      requestLabels: [{ name: 'tenant', from: (request) => request.tenant, values: ['acme'] }],
    });
    try {
      await serve(handle, [
        { tenant: 'acme', firstMs: 10, e2eMs: 1500, tokens: 3, audio: null, end: 'stop' },
        { tenant: 'globex', firstMs: 10, e2eMs: 500, tokens: 3, audio: null, end: 'stop' },
      ]);
      const text = await handle.metricsText();
      assert.deepEqual(
        parseSamples(text)
          .filter((sample) => sample.name === GOOD || sample.name === MISSES)
          .map((sample) => `${sample.name}${JSON.stringify(sample.labels)} ${sample.value}`),
        [
          `${GOOD}{"model_name":"m","tenant":"acme"} 0`,
          `${GOOD}{"model_name":"m","tenant":"other"} 1`,
          `${MISSES}{"model_name":"m","objective":"e2e","tenant":"acme"} 1`,
          `${MISSES}{"model_name":"m","objective":"e2e","tenant":"other"} 0`,
        ],
      );
    } finally {
      await handle.shutdown();
    }
  });

  it('each counter keeps the trace of the request it counted last, as the other request counters (exemplars on)', async () => {
    const handle = await quietHandle({ logStats: true, exemplars: true, slo: { e2eSeconds: 1 } });
    try {
      const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
      await serve(
        handle,
        [
          { tenant: 'acme', firstMs: 10, e2eMs: 500, tokens: 3, audio: null, end: 'stop' },
          { tenant: 'acme', firstMs: 10, e2eMs: 1500, tokens: 3, audio: null, end: 'stop' },
        ],
        `00-${trace}-00f067aa0ba902b7-01`,
      );
      const lines = (await handle.metricsText('openmetrics')).split('\n');
      for (const series of [`${GOOD}{model_name="m"} 1.0 # `, `${MISSES}{model_name="m",objective="e2e"} 1.0 # `]) {
        const line = lines.find((text) => text.startsWith(series));
        assert.ok(line?.includes(`trace_id="${trace}"`), `${series}…: ${line ?? 'none'}`);
      }
    } finally {
      await handle.shutdown();
    }
  });

  it('with logStats off nothing is counted, as every pipeline family (the families stay declared)', async () => {
    const handle = await quietHandle({ slo: { e2eSeconds: 1 } });
    try {
      await serve(handle, [{ tenant: 'acme', firstMs: 10, e2eMs: 1500, tokens: 3, audio: null, end: 'stop' }]);
      const text = await handle.metricsText();
      assert.equal(sampleValue(text, GOOD, { model_name: 'm' }), 0);
      assert.equal(sampleValue(text, MISSES, { model_name: 'm', objective: 'e2e' }), 0);
    } finally {
      await handle.shutdown();
    }
  });

  it('hostile calls of the public recorder never throw: timings that are no numbers or throw when read drop the request, with a warning', async () => {
    const handle = await quietHandle({ logStats: true, slo: { e2eSeconds: 1, tpotSeconds: 0.1, audioRtf: 1 } });
    try {
      const slo = handle.slo;
      assert.ok(slo);
      const throwing = Object.defineProperty({ firstOutputSeconds: 0, outputTokens: 3 }, 'e2eSeconds', {
        get() {
          throw new Error('host getter');
        },
      });
      const { warnings } = withWarnings(() => {
        slo.requestFinished(undefined, 'stop', throwing as never);
        slo.requestFinished(undefined, 'stop', { firstOutputSeconds: 0, e2eSeconds: Number.NaN, outputTokens: 1 });
        slo.requestFinished(undefined, 'stop', { firstOutputSeconds: 0, e2eSeconds: '0.5' as never, outputTokens: 1 });
        slo.requestFinished(undefined, 'stop', { firstOutputSeconds: 0, e2eSeconds: 0.5, outputTokens: Symbol('n') as never });
        slo.requestFinished(undefined, 'stop', null as never);
        slo.requestFinished('tenant' as never, Symbol('reason') as never, { firstOutputSeconds: 0, e2eSeconds: 0.5, outputTokens: 1, audioRtf: null as never });
      });
      assert.ok(warnings.length >= 2, warnings.join('\n'));
      const text = await handle.metricsText();
      // Only the last call was readable: one good request (a reason that is no string still finished, and a null RTF is no RTF).
      assert.equal(sampleValue(text, GOOD, { model_name: 'm' }), 1);
      assert.equal(total(text, MISSES, {}), 0);
    } finally {
      await handle.shutdown();
    }
  });

  it('property: per tenant, good + requests that missed something = requests finished successfully, and each miss counts under its objective', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(plannedRequest, { minLength: 1, maxLength: 25 }), objectives, async (requests, slo) => {
        const handle = await quietHandle({ logStats: true, slo, requestLabels: [{ name: 'tenant', from: (request) => request.tenant, values: [...TENANTS] }] });
        try {
          const starts = await serve(handle, requests);
          const text = await handle.metricsText();
          for (const tenant of TENANTS) {
            const judged = requests.flatMap((request, i) => (request.tenant === tenant ? [expectedMisses(request, starts[i] as number, slo)] : []));
            const finished = judged.filter((missed) => missed !== undefined);
            const good = finished.filter((missed) => missed.length === 0).length;
            const missedSomething = finished.length - good;
            assert.equal(total(text, GOOD, { tenant }), good, `good of ${tenant}`);
            assert.equal(total(text, SUCCESS, { tenant }, unsuccessful), finished.length, `finished of ${tenant}`);
            assert.equal(good + missedSomething, total(text, SUCCESS, { tenant }, unsuccessful));
            for (const objective of ['first_output', 'e2e', 'tpot', 'audio_ttfp', 'audio_rtf']) {
              const expected = finished.filter((missed) => missed.includes(objective)).length;
              assert.equal(total(text, MISSES, { tenant, objective }), expected, `${objective} misses of ${tenant}`);
            }
          }
        } finally {
          await handle.shutdown();
        }
      }),
      { numRuns: 60 },
    );
  });
});
