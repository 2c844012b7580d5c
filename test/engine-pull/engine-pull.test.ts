import assert from 'node:assert/strict';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { parseSamples, sampleValue, seriesOf } from '../support/exposition';
import { activeResources, assertResourcesBackTo } from '../support/resources';
import { EngineServer, fixtureText } from './support/engine-server';
import { allowPrinted } from '../support/console-capture';
import { expectedLines, servedLines } from './support/expected';

/** What a pull that failed says (the engine down, hung or cut off). */
const ENGINE_NOT_SERVED = /^omni-otel-metrics: engine metrics at http:\/\/127\.0\.0\.1:\d+\/metrics\S* not served \(.*\): vllm:omni_engine_scrape_up is 0 for /;

const OLD = fixtureText('vllm-v0.10-engine0.prom');
const CURRENT = fixtureText('vllm-current-engine0.prom');
const DP = fixtureText('vllm-current-dp2.prom');
/** Stage 0: an older vLLM; stage 1: a current one; stage 2: one data-parallel server, two engines; stage 3: in-process only. */
const POOLS = [1, 1, 2, 1];
const TIMEOUT_MILLIS = 400;
const UP = 'vllm:omni_engine_scrape_up';

interface Engines {
  readonly old: EngineServer;
  readonly current: EngineServer;
  readonly dp: EngineServer;
}

async function startEngines(): Promise<Engines> {
  return { old: await EngineServer.start(OLD), current: await EngineServer.start(CURRENT), dp: await EngineServer.start(DP) };
}

async function stopEngines(engines: Engines | undefined): Promise<void> {
  if (engines === undefined) return;
  await Promise.all([engines.old.down(), engines.current.down(), engines.dp.down()]);
}

function register(engines: Engines, extra: { cacheMillis?: number; intervalMillis?: number; passThrough?: string[] } = {}): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({
    modelName: 'm',
    stagePools: POOLS,
    logStats: true,
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    enginePull: {
      engines: [
        { stage: 0, replica: 0, url: engines.old.url },
        { stage: 1, replica: 0, url: engines.current.url },
        { stage: 2, replica: 0, url: engines.dp.url, engine: 0 },
        { stage: 2, replica: 1, url: engines.dp.url, engine: '1' },
      ],
      timeoutMillis: TIMEOUT_MILLIS,
      cacheMillis: extra.cacheMillis ?? 0,
      intervalMillis: extra.intervalMillis,
      passThrough: extra.passThrough ?? ['process_resident_memory_bytes'],
    },
  });
}

/** The lines of one family block: from its HELP to the next family's HELP. */
function familyBlock(text: string, name: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(lines.find((line) => line.startsWith(`# HELP ${name} `)) ?? '\u0000');
  assert.ok(start >= 0, `a HELP line for ${name}`);
  const end = lines.findIndex((line, i) => i > start + 1 && line.startsWith('# HELP '));
  return lines.slice(start, end < 0 ? undefined : end);
}

describe('engine pull: real vLLM engines behind the pipeline', () => {
  let engines: Engines | undefined;
  let handle: OmniMetricsHandle | undefined;

  beforeEach(async () => {
    engines = await startEngines();
    handle = await register(engines);
  });

  afterEach(async () => {
    await handle?.shutdown();
    await stopEngines(engines);
    handle = undefined;
    engines = undefined;
  });

  it("serves every engine's vllm:* samples, _created included, under its stage and replica, exactly as the fixture prints them", async () => {
    const text = await handle!.metricsText();
    assert.deepEqual(servedLines(text, 0, 0), expectedLines(OLD, '0', 0, 0), 'older vLLM (gpu_cache_usage_perc, gpu_prefix_cache_*)');
    assert.deepEqual(servedLines(text, 1, 0), expectedLines(CURRENT, '0', 1, 0), 'current vLLM (kv_cache_usage_perc, prefix_cache_*)');
    assert.deepEqual(servedLines(text, 2, 0), expectedLines(DP, '0', 2, 0), 'data-parallel server, engine 0');
    assert.deepEqual(servedLines(text, 2, 1), expectedLines(DP, '1', 2, 1), 'data-parallel server, engine 1');
    // A few values spelled out, so the comparison above cannot pass on two empty lists.
    assert.equal(sampleValue(text, 'vllm:gpu_cache_usage_perc', { model_name: 'org/old-model', stage: '0', replica: '0' }), 0.125);
    assert.equal(sampleValue(text, 'vllm:prefix_cache_queries_total', { model_name: 'org/current-model', stage: '1', replica: '0' }), 2000);
    assert.equal(sampleValue(text, 'vllm:prompt_tokens_total', { model_name: 'org/dp-model', stage: '2', replica: '1' }), 4936);
    assert.equal(sampleValue(text, 'vllm:prompt_tokens_created', { model_name: 'org/dp-model', stage: '2', replica: '1' }), 1767225607.75);
    assert.equal(sampleValue(text, 'vllm:e2e_request_latency_seconds_sum', { model_name: 'org/current-model', stage: '1', replica: '0' }), 9003);
  });

  it('leaves no engine label, and no in-process series of a pulled replica; an in-process replica keeps its own', async () => {
    const text = await handle!.metricsText();
    assert.ok(
      parseSamples(text).every((sample) => sample.labels.engine === undefined),
      'no engine label anywhere',
    );
    // Stage 0's eager in-process zero series would carry model_name="m": the pulled figures replace them.
    assert.equal(sampleValue(text, 'vllm:prompt_tokens_total', { model_name: 'm', stage: '0', replica: '0' }), undefined);
    assert.equal(sampleValue(text, 'vllm:prompt_tokens_total', { model_name: 'm', stage: '3', replica: '0' }), 0);
  });

  it('joins a family the store and the engines both have into one block: one HELP and TYPE, every series', async () => {
    handle!.store.bindAttributes('upstream.promptTokens', { model_name: 'm', engine: String(handle!.stageReplicaMap.engineIndex(3, 0)) }).record(42);
    const text = await handle!.metricsText();
    for (const name of ['vllm:prompt_tokens_total', 'vllm:prompt_tokens_created', 'vllm:e2e_request_latency_seconds', 'vllm:kv_cache_usage_perc']) {
      assert.equal(text.split('\n').filter((line) => line.startsWith(`# TYPE ${name} `)).length, 1, `one TYPE line for ${name}`);
      assert.equal(text.split('\n').filter((line) => line.startsWith(`# HELP ${name} `)).length, 1, `one HELP line for ${name}`);
    }
    const block = familyBlock(text, 'vllm:prompt_tokens_total');
    assert.deepEqual(block.slice(0, 2), ['# HELP vllm:prompt_tokens_total Number of prefill tokens processed.', '# TYPE vllm:prompt_tokens_total counter']);
    assert.deepEqual(block.slice(2), [
      'vllm:prompt_tokens_total{model_name="m",replica="0",stage="3"} 42.0',
      'vllm:prompt_tokens_total{model_name="org/old-model",replica="0",stage="0"} 1234.0',
      'vllm:prompt_tokens_total{model_name="org/current-model",replica="0",stage="1"} 2468.0',
      'vllm:prompt_tokens_total{model_name="org/dp-model",replica="0",stage="2"} 3702.0',
      'vllm:prompt_tokens_total{model_name="org/dp-model",replica="1",stage="2"} 4936.0',
    ]);
    const created = familyBlock(text, 'vllm:prompt_tokens_created');
    assert.equal(created.length, 2 + 5);
    assert.equal(created[3], 'vllm:prompt_tokens_created{model_name="org/old-model",replica="0",stage="0"} 1.76722560075e+09');
  });

  it('carries _created inline in OpenMetrics, after each series', async () => {
    const text = await handle!.metricsText('openmetrics');
    const lines = text.split('\n');
    const at = lines.indexOf('vllm:prompt_tokens_total{model_name="org/current-model",replica="0",stage="1"} 2468.0');
    assert.ok(at > 0);
    assert.equal(lines[at + 1], 'vllm:prompt_tokens_created{model_name="org/current-model",replica="0",stage="1"} 1.767225603e+09');
    assert.ok(text.endsWith('# EOF\n'));
  });

  it('passes families outside vllm:* only when listed; escaped label values and NaN survive', async () => {
    const text = await handle!.metricsText();
    assert.equal(sampleValue(text, 'process_resident_memory_bytes', { stage: '1', replica: '0' }), 123456789);
    assert.deepEqual(seriesOf(text, 'http_requests_total'), []);
    assert.ok(text.includes('vllm:odd_label_values{model_name="escape \\"me\\"",path="C:\\\\models\\nline2",replica="0",stage="1"} NaN\n'));
  });

  it('reports every pulled replica up', async () => {
    const text = await handle!.metricsText();
    assert.deepEqual(familyBlock(text, UP).slice(1), [
      `# TYPE ${UP} gauge`,
      `${UP}{replica="0",stage="0"} 1.0`,
      `${UP}{replica="0",stage="1"} 1.0`,
      `${UP}{replica="0",stage="2"} 1.0`,
      `${UP}{replica="1",stage="2"} 1.0`,
      '',
    ]);
  });

  it('an engine going down: up 0 and its series absent, the rest intact; coming back: up 1 and its values again', async () => {
    const before = await handle!.metricsText();
    await engines!.current.down();
    // The failed pull is said, at most once a minute per puller.
    const down = await allowPrinted([ENGINE_NOT_SERVED], () => handle!.metricsText());
    assert.equal(sampleValue(down, UP, { stage: '1', replica: '0' }), 0);
    assert.deepEqual(servedLines(down, 1, 0), []);
    assert.equal(sampleValue(down, UP, { stage: '0', replica: '0' }), 1);
    assert.deepEqual(servedLines(down, 0, 0), servedLines(before, 0, 0));
    assert.deepEqual(servedLines(down, 2, 1), servedLines(before, 2, 1));
    assert.equal(sampleValue(down, 'vllm:prompt_tokens_total', { model_name: 'm', stage: '3', replica: '0' }), 0);

    await engines!.current.up();
    const back = await handle!.metricsText();
    assert.equal(sampleValue(back, UP, { stage: '1', replica: '0' }), 1);
    assert.deepEqual(servedLines(back, 1, 0), expectedLines(CURRENT, '0', 1, 0));
  });

  it('a hung engine holds the scrape no longer than the timeout', async () => {
    engines!.dp.hang = true;
    const started = Date.now();
    const text = await allowPrinted([ENGINE_NOT_SERVED], () => handle!.metricsText());
    const elapsed = Date.now() - started;
    // The scrape ends (a hang past the timeout would fail the test by its own timeout); it waited for the timeout, not less.
    assert.ok(elapsed >= TIMEOUT_MILLIS - 50, `took ${elapsed} ms`);
    assert.equal(sampleValue(text, UP, { stage: '2', replica: '0' }), 0);
    assert.equal(sampleValue(text, UP, { stage: '2', replica: '1' }), 0);
    assert.equal(sampleValue(text, UP, { stage: '1', replica: '0' }), 1);
    assert.deepEqual(servedLines(text, 2, 0), []);
    assert.deepEqual(servedLines(text, 1, 0), expectedLines(CURRENT, '0', 1, 0));
  });

  it('fetches a data-parallel URL once per pull for all its engines', async () => {
    const before = engines!.dp.requests;
    await handle!.metricsText();
    assert.equal(engines!.dp.requests - before, 1);
  });

  it('stops pulling a replica removed while serving; its series and up gauge leave', async () => {
    handle!.removeReplica(2, 1);
    const text = await handle!.metricsText();
    assert.equal(sampleValue(text, UP, { stage: '2', replica: '1' }), undefined);
    assert.deepEqual(servedLines(text, 2, 1), []);
    assert.deepEqual(servedLines(text, 2, 0), expectedLines(DP, '0', 2, 0));
  });
});

describe('engine pull: cache, interval, shutdown', () => {
  let engines: Engines | undefined;
  let handle: OmniMetricsHandle | undefined;

  afterEach(async () => {
    await handle?.shutdown();
    await stopEngines(engines);
    handle = undefined;
    engines = undefined;
  });

  it('serves a pull younger than cacheMillis again, shares overlapping pulls, and pulls anew once it is older', async () => {
    engines = await startEngines();
    handle = await register(engines, { cacheMillis: 300 });
    const [a, b] = await Promise.all([handle.metricsText(), handle.metricsText('openmetrics')]);
    assert.equal(engines.old.requests, 1, 'overlapping scrapes share one pull');
    await handle.metricsText();
    assert.equal(engines.old.requests, 1, 'a fresh pull is served from the cache');
    engines.old.text = OLD.replace(
      'vllm:prompt_tokens_total{engine="0",model_name="org/old-model"} 1234.0',
      'vllm:prompt_tokens_total{engine="0",model_name="org/old-model"} 1300.0',
    );
    assert.equal(
      sampleValue(await handle.metricsText(), 'vllm:prompt_tokens_total', { model_name: 'org/old-model', stage: '0', replica: '0' }),
      1234,
      'still cached',
    );
    await new Promise((resolve) => setTimeout(resolve, 350));
    const later = await handle.metricsText();
    assert.equal(engines.old.requests, 2);
    assert.equal(sampleValue(later, 'vllm:prompt_tokens_total', { model_name: 'org/old-model', stage: '0', replica: '0' }), 1300);
    assert.ok(a.includes('org/old-model') && b.includes('org/old-model'));
  });

  it('with intervalMillis pulls in the background, scrapes read the latest, and shutdown stops every pull', async () => {
    engines = await startEngines();
    handle = await register(engines, { intervalMillis: 50 });
    // Three pulls with no scrape: 150 ms apart at the least; a busy machine may take longer to run the timer.
    const deadline = Date.now() + 2000;
    while (engines.current.requests < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const pulled = engines.current.requests;
    assert.ok(pulled >= 3, `pulled ${pulled} times by itself`);
    const text = await handle.metricsText();
    assert.equal(engines.current.requests - pulled <= 1, true, 'a scrape does not pull by itself');
    assert.deepEqual(servedLines(text, 1, 0), expectedLines(CURRENT, '0', 1, 0));
    await handle.shutdown();
    handle = undefined;
    const atShutdown = engines.current.requests;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(engines.current.requests, atShutdown, 'no pull after shutdown');
  });

  it('shutdown during a pull: a request queued behind the two connections per host never leaves, and no socket or timer stays', async () => {
    const engine = await EngineServer.start(CURRENT);
    engine.hang = true;
    try {
      const before = await activeResources();
      // Three URLs on one host and port: two requests go out, the third waits for a connection.
      handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [3],
        logStats: true,
        prometheus: false,
        exporters: [],
        logIntervalSeconds: 0,
        enginePull: { engines: [0, 1, 2].map((replica) => ({ stage: 0, replica, url: `${engine.url}/${replica}` })), timeoutMillis: 10_000 },
      });
      const text = await allowPrinted([ENGINE_NOT_SERVED], async () => {
        const scrape = handle!.metricsText();
        while (engine.requests < 2) await new Promise((resolve) => setTimeout(resolve, 10));
        await handle!.shutdown();
        handle = undefined;
        return scrape;
      });
      assert.equal(sampleValue(text, UP, { stage: '0', replica: '2' }), 0, 'the queued engine counts as down');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(engine.requests, 2, 'the queued request was not sent after shutdown');
      await assertResourcesBackTo(before, 'after shutdown');
    } finally {
      await engine.down();
    }
  });
});

describe('engine pull: option validation', () => {
  const base = { modelName: 'm', stagePools: [1, 2], prometheus: false as const, exporters: [], logIntervalSeconds: 0 };
  const cases: Array<[string, unknown, RegExp]> = [
    ['a URL that does not parse', { engines: [{ stage: 0, replica: 0, url: 'not a url' }] }, /enginePull\.engines\[0\]\.url must be an http\(s\) URL/],
    ['a URL that is not http(s)', { engines: [{ stage: 0, replica: 0, url: 'ftp://127.0.0.1/metrics' }] }, /enginePull\.engines\[0\]\.url/],
    [
      'an unknown stage',
      { engines: [{ stage: 2, replica: 0, url: 'http://127.0.0.1:1/metrics' }] },
      /enginePull\.engines\[0\]\.stage must be one of the 2 stages/,
    ],
    [
      'an unknown replica',
      { engines: [{ stage: 1, replica: 2, url: 'http://127.0.0.1:1/metrics' }] },
      /enginePull\.engines\[0\]\.replica must be a replica of stage 1/,
    ],
    [
      'a duplicate (stage, replica)',
      {
        engines: [
          { stage: 1, replica: 0, url: 'http://127.0.0.1:1/metrics' },
          { stage: 1, replica: 0, url: 'http://127.0.0.1:2/metrics' },
        ],
      },
      /enginePull\.engines\[1\]: stage 1 replica 0 is listed twice/,
    ],
    [
      'one engine for two replicas',
      {
        engines: [
          { stage: 1, replica: 0, url: 'http://127.0.0.1:1/metrics' },
          { stage: 1, replica: 1, url: 'http://127.0.0.1:1/metrics', engine: 0 },
        ],
      },
      /enginePull\.engines\[1\]: engine 0 of http:\/\/127\.0\.0\.1:1\/metrics is already another replica's/,
    ],
    ['a bad engine label', { engines: [{ stage: 0, replica: 0, url: 'http://127.0.0.1:1/metrics', engine: -1 }] }, /enginePull\.engines\[0\]\.engine/],
    ['no engines', { engines: [] }, /enginePull\.engines must list at least one/],
    [
      'a bad timeout',
      { engines: [{ stage: 0, replica: 0, url: 'http://127.0.0.1:1/metrics' }], timeoutMillis: 0 },
      /enginePull\.timeoutMillis must be a finite number > 0/,
    ],
    [
      'a bad passThrough name',
      { engines: [{ stage: 0, replica: 0, url: 'http://127.0.0.1:1/metrics' }], passThrough: ['no spaces'] },
      /enginePull\.passThrough\[0\]/,
    ],
  ];
  for (const [what, enginePull, message] of cases) {
    it(`rejects ${what} before anything starts`, async () => {
      await assert.rejects(registerOmniMetrics({ ...base, enginePull } as never), message);
    });
  }
});
