import assert from 'node:assert/strict';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { parseSamples, sampleValue } from '../support/exposition';
import { assertValidEverywhere } from './support/checkers';
import { EngineServer } from './support/engine-server';
import { needPeer } from '../support/peers/need-peer';

const UP = 'vllm:omni_engine_scrape_up';
const PULLED = { stage: '0', replica: '0' };
/** What every hostile engine also prints, and must still be served. */
const BASE =
  '# HELP vllm:num_requests_running Number of requests running.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0",model_name="x"} 3.0\n';

interface Scrape {
  readonly text: string;
  readonly openMetrics: string;
  readonly warnings: string[];
  readonly url: string;
}

/** Registers a pipeline pulling one engine that prints `body`, scrapes it in both formats, and stops everything. */
async function scrapeEngine(body: string, extra: { cardinalityLimit?: number; timeoutMillis?: number } = {}): Promise<Scrape> {
  const engine = await EngineServer.start(body);
  const warnings: string[] = [];
  diag.setLogger({ error: () => {}, warn: (message: string) => warnings.push(message), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  let handle: OmniMetricsHandle | undefined;
  try {
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 1],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      processMetrics: false,
      cardinalityLimit: extra.cardinalityLimit,
      enginePull: { engines: [{ stage: 0, replica: 0, url: engine.url }], cacheMillis: 60_000, timeoutMillis: extra.timeoutMillis ?? 2000 },
    });
    const text = await handle.metricsText();
    const openMetrics = await handle.metricsText('openmetrics');
    return { text, openMetrics, warnings, url: engine.url };
  } finally {
    await handle?.shutdown();
    diag.disable();
    await engine.down();
  }
}

function helpLines(text: string, name: string): number {
  return text.split('\n').filter((line) => line.startsWith(`# HELP ${name} `)).length;
}

function pulledSamples(text: string, name: string): number {
  return parseSamples(text).filter((s) => s.name === name && s.labels.stage === '0' && s.labels.replica === '0').length;
}

describe('engine pull: whatever an engine prints, /metrics stays valid in both formats', function () {
  needPeer('debian-prometheus', this);
  needPeer('debian-prometheus-client', this);
  const cases: Array<{ what: string; body: string; family: string; check: (scrape: Scrape) => void }> = [
    {
      what: 'a _created gauge family without its counter (the package prints the counter, and with it that name)',
      body: '# HELP vllm:prompt_tokens_created x\n# TYPE vllm:prompt_tokens_created gauge\nvllm:prompt_tokens_created{engine="0",model_name="x"} 1.7e+09\n',
      family: 'vllm:prompt_tokens_created',
      check: ({ text }) => {
        assert.equal(helpLines(text, 'vllm:prompt_tokens_created'), 1);
        assert.equal(pulledSamples(text, 'vllm:prompt_tokens_created'), 0);
      },
    },
    {
      what: 'a counter X_total beside a gauge X',
      body: '# TYPE vllm:foo gauge\nvllm:foo{engine="0"} 1.0\n# TYPE vllm:foo_total counter\nvllm:foo_total{engine="0"} 2.0\n',
      family: 'vllm:foo_total',
      check: ({ text }) => {
        assert.equal(sampleValue(text, 'vllm:foo', PULLED), 1, 'the first family stays');
        assert.equal(pulledSamples(text, 'vllm:foo_total'), 0);
      },
    },
    {
      what: 'a counter without _total, renamed X_total, beside a gauge X_total',
      body: '# TYPE vllm:bar_total gauge\nvllm:bar_total{engine="0"} 1.0\n# TYPE vllm:bar counter\nvllm:bar{engine="0"} 2.0\n',
      family: 'vllm:bar_total',
      check: ({ text }) => {
        assert.equal(sampleValue(text, 'vllm:bar_total', PULLED), 1);
        assert.equal(helpLines(text, 'vllm:bar_total'), 1);
      },
    },
    {
      what: 'buckets le="1" and le="1.0" in one series',
      body: '# TYPE vllm:h histogram\nvllm:h_bucket{engine="0",le="1"} 1.0\nvllm:h_bucket{engine="0",le="1.0"} 1.0\nvllm:h_bucket{engine="0",le="+Inf"} 1.0\nvllm:h_count{engine="0"} 1.0\nvllm:h_sum{engine="0"} 0.5\n',
      family: 'vllm:h',
      check: ({ text }) => assert.equal(pulledSamples(text, 'vllm:h_bucket'), 0),
    },
    {
      what: 'a NaN counter',
      body: '# TYPE vllm:baz_total counter\nvllm:baz_total{engine="0"} NaN\n',
      family: 'vllm:baz_total',
      check: ({ text }) => assert.equal(pulledSamples(text, 'vllm:baz_total'), 0),
    },
    {
      what: 'a pipeline family the package prints itself',
      body: '# HELP vllm:omni_num_requests_running x\n# TYPE vllm:omni_num_requests_running gauge\nvllm:omni_num_requests_running{engine="0"} 99.0\n',
      family: 'vllm:omni_num_requests_running',
      check: ({ text }) => {
        assert.equal(helpLines(text, 'vllm:omni_num_requests_running'), 1);
        assert.ok(parseSamples(text).every((s) => s.name !== 'vllm:omni_num_requests_running' || s.value !== 99));
      },
    },
    {
      what: "the package's own scrape-up gauge",
      body: `# HELP ${UP} x\n# TYPE ${UP} gauge\n${UP}{engine="0"} 0.0\n`,
      family: UP,
      check: ({ text }) => {
        assert.equal(sampleValue(text, UP, PULLED), 1, 'the package says whether the pull worked');
        assert.equal(pulledSamples(text, UP), 1);
      },
    },
    {
      what: 'a __name__ label',
      body: '# TYPE vllm:q gauge\nvllm:q{engine="0",__name__="other"} 1.0\n',
      family: 'vllm:q',
      check: ({ text }) => assert.equal(pulledSamples(text, 'vllm:q'), 0),
    },
    {
      what: 'a histogram beside a _count gauge',
      body: '# TYPE vllm:g histogram\nvllm:g_bucket{engine="0",le="+Inf"} 2.0\nvllm:g_count{engine="0"} 2.0\nvllm:g_sum{engine="0"} 1.0\n# TYPE vllm:g_count gauge\nvllm:g_count{engine="0"} 7.0\n',
      family: 'vllm:g_count',
      check: ({ text }) => assert.equal(sampleValue(text, 'vllm:g_count', PULLED), 2, 'the histogram stays'),
    },
  ];
  for (const { what, body, family, check } of cases) {
    it(`${what}: that family is left out with a warning naming the engine and the family, the rest served`, async () => {
      const scrape = await scrapeEngine(`${BASE}${body}`);
      await assertValidEverywhere(scrape.text, scrape.openMetrics);
      check(scrape);
      assert.equal(sampleValue(scrape.text, 'vllm:num_requests_running', { model_name: 'x', ...PULLED }), 3, 'the rest of the engine is served');
      assert.equal(sampleValue(scrape.text, UP, PULLED), 1);
      assert.ok(
        scrape.warnings.some((w) => w.includes(family) && w.includes(`engine 0 of ${scrape.url}`)),
        `a warning naming ${family} and the engine: ${JSON.stringify(scrape.warnings)}`,
      );
    });
  }

  for (const [what, body] of [
    ['le="1e999"', '# TYPE vllm:h histogram\nvllm:h_bucket{engine="0",le="1e999"} 1.0\nvllm:h_bucket{engine="0",le="+Inf"} 1.0\n'],
    ['a value of 1e999', 'vllm:v{engine="0"} 1e999\n'],
  ]) {
    it(`${what}, which Prometheus refuses to scrape: the engine counts as down, with a warning giving the line`, async () => {
      const scrape = await scrapeEngine(`${BASE}${body as string}`);
      await assertValidEverywhere(scrape.text, scrape.openMetrics);
      assert.equal(sampleValue(scrape.text, UP, PULLED), 0);
      assert.ok(
        scrape.warnings.some((w) => w.includes(scrape.url) && /line \d+/.test(w)),
        JSON.stringify(scrape.warnings),
      );
    });
  }

  it('a _created that is NaN, negative or past 2262: the series is served, started when first seen', async () => {
    const scrape = await scrapeEngine(
      `${BASE}# TYPE vllm:c_total counter\nvllm:c_total{engine="0"} 4.0\n# TYPE vllm:c_created gauge\nvllm:c_created{engine="0"} NaN\n` +
        '# TYPE vllm:d_total counter\nvllm:d_total{engine="0"} 5.0\n# TYPE vllm:d_created gauge\nvllm:d_created{engine="0"} 1e+300\n',
    );
    await assertValidEverywhere(scrape.text, scrape.openMetrics);
    const now = Date.now() / 1000;
    for (const [name, value] of [
      ['vllm:c', 4],
      ['vllm:d', 5],
    ] as const) {
      assert.equal(sampleValue(scrape.text, `${name}_total`, PULLED), value);
      const created = sampleValue(scrape.text, `${name}_created`, PULLED) as number;
      assert.ok(created > now - 60 && created <= now + 1, `${name}_created ${created}`);
    }
  });

  it('a family with more series than cardinalityLimit: the first cardinalityLimit served, the rest dropped with a warning', async () => {
    let body = '# TYPE vllm:wide gauge\n';
    for (let i = 0; i < 500; i++) body += `vllm:wide{engine="0",id="${i}"} ${i}.0\n`;
    const scrape = await scrapeEngine(`${BASE}${body}`, { cardinalityLimit: 50 });
    assert.equal(pulledSamples(scrape.text, 'vllm:wide'), 50);
    assert.equal(sampleValue(scrape.text, 'vllm:wide', { id: '49', ...PULLED }), 49);
    assert.ok(
      scrape.warnings.some((w) => w.includes('vllm:wide') && w.includes('cardinalityLimit')),
      JSON.stringify(scrape.warnings),
    );
  });
});
