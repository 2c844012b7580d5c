import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExpositionParseError, parseExposition } from '../../exporters/engine-pull/exposition-parser';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { captureWarnings } from '../support/diag-capture';
import { parseSamples, sampleValue } from '../support/exposition';
import { EngineServer } from './support/engine-server';

/**
 * One registry printed by prometheus_client 0.26 twice (`fixtures/generate-openmetrics-fixture.py`):
 * as OpenMetrics 1.0, exemplars on counters and buckets, an info, a stateset, a summary, a gauge
 * histogram, a unit, a sample timestamp, `# EOF`; and as the 0.0.4 text.
 */
const fixture = (name: string): string => readFileSync(join(__dirname, 'fixtures', name), 'utf8');
const OPENMETRICS = fixture('vllm-openmetrics-exemplars.om');
const TEXT = fixture('vllm-openmetrics-exemplars.prom');
const UP = 'vllm:omni_engine_scrape_up';

/** The samples of one replica, gauge-histogram families aside, `stage`/`replica` dropped: what both engines must agree on. */
function replicaSamples(exposition: string, stage: string): string[] {
  return parseSamples(exposition)
    .filter((sample) => sample.labels.stage === stage && sample.labels.replica === '0' && !sample.name.startsWith('vllm:omni_'))
    .filter((sample) => !sample.name.startsWith('vllm:queue_size_blocks'))
    .map((sample) => {
      const { stage: _stage, replica: _replica, ...labels } = sample.labels;
      return `${sample.name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))} ${sample.rawValue}`;
    })
    .sort();
}

describe('engine pull: an engine that answers OpenMetrics with exemplars', function () {
  this.timeout(20_000);
  let openMetrics: EngineServer | undefined;
  let text: EngineServer | undefined;
  let handle: OmniMetricsHandle | undefined;
  let captured: ReturnType<typeof captureWarnings> | undefined;

  before(async () => {
    assert.match(OPENMETRICS, / # \{trace_id="a+0"\} 1234\.0 1767225600\.75$/m, 'the fixture carries exemplars');
    openMetrics = await EngineServer.start(OPENMETRICS);
    openMetrics.contentType = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
    text = await EngineServer.start(TEXT);
    captured = captureWarnings();
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 1],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      selfCheck: false,
      enginePull: {
        engines: [
          { stage: 0, replica: 0, url: openMetrics.url, engine: 1 },
          { stage: 1, replica: 0, url: text.url, engine: 1 },
        ],
        passThrough: ['engine_sleep_state'],
        timeoutMillis: 1000,
        cacheMillis: 0,
      },
    });
  });

  after(async () => {
    await handle?.shutdown();
    await openMetrics?.down();
    await text?.down();
    captured?.stop();
  });

  it('is up, and serves what the same registry printed as 0.0.4 text serves: counters, _created, histograms, the info, the stateset, the timestamped gauge', async () => {
    const exposition = await handle!.metricsText();
    assert.equal(sampleValue(exposition, UP, { stage: '0', replica: '0' }), 1, 'the OpenMetrics engine is up');
    assert.equal(sampleValue(exposition, UP, { stage: '1', replica: '0' }), 1, 'the 0.0.4 engine is up');
    const fromOpenMetrics = replicaSamples(exposition, '0');
    assert.deepEqual(fromOpenMetrics, replicaSamples(exposition, '1'));
    for (const name of [
      'vllm:prompt_tokens_total',
      'vllm:prompt_tokens_created',
      'vllm:e2e_request_latency_seconds_bucket',
      'vllm:cache_config_info',
      'engine_sleep_state',
      'vllm:last_step_seconds',
      'vllm:temperature_celsius',
    ]) {
      assert.ok(
        fromOpenMetrics.some((line) => line.startsWith(`${name}[`)),
        `${name} is served`,
      );
    }
    assert.ok(fromOpenMetrics.includes('vllm:prompt_tokens_total[["model_name","org/model"]] 2468.0'), fromOpenMetrics.join('\n'));
  });

  it('leaves its gauge histogram out, saying so once', () => {
    assert.deepEqual(
      captured?.warnings.filter((warning) => warning.includes('gaugehistogram')),
      [
        `omni-otel-metrics: vllm:queue_size_blocks of ${openMetrics!.url} is an OpenMetrics gaugehistogram; engine pull passes counters, gauges and histograms only`,
      ],
    );
  });
});

describe('exposition parser: OpenMetrics syntax it reads past', () => {
  it('exemplars, OpenMetrics timestamps (seconds), # UNIT and # EOF leave the samples as they are', () => {
    const families = parseExposition(
      [
        '# HELP c A "quoted" help.',
        '# TYPE c counter',
        '# UNIT c seconds',
        'c_total{a="x # {y}"} 3.0 # {trace_id="abc",span_id="d"} 1.0 1767225600.75',
        'c_total{a="y"} 4.0 1767225600.5 # {trace_id="e"} 2.0',
        'c_total{a="z"} 5.0 1700000000000',
        'c_created{a="x # {y}"} 1.7672256e+09',
        '# EOF',
        '',
      ].join('\n'),
    );
    assert.deepEqual(families, [
      {
        name: 'c',
        type: 'counter',
        help: 'A "quoted" help.',
        samples: [
          { name: 'c_total', labels: { a: 'x # {y}' }, value: 3 },
          { name: 'c_total', labels: { a: 'y' }, value: 4 },
          { name: 'c_total', labels: { a: 'z' }, value: 5 },
        ],
        droppedSamples: 0,
      },
      {
        name: 'c_created',
        type: 'gauge',
        help: 'A "quoted" help.',
        samples: [{ name: 'c_created', labels: { a: 'x # {y}' }, value: 1767225600 }],
        droppedSamples: 0,
      },
    ]);
  });

  it('reads an info as the gauge X_info, a stateset as a gauge, unknown as untyped, and keeps no gauge histogram', () => {
    const unused: string[] = [];
    const families = parseExposition(
      [
        '# TYPE i info',
        'i_info{v="1"} 1.0',
        '# TYPE s stateset',
        's{s="a"} 1.0',
        '# TYPE u unknown',
        'u 7.0',
        '# TYPE g gaugehistogram',
        'g_bucket{le="+Inf"} 2.0',
        'g_gcount 2.0',
        'g_gsum 1.0',
        '',
      ].join('\n'),
      { unused: (name, type) => unused.push(`${name} ${type}`) },
    );
    assert.deepEqual(
      families.map(({ name, type, samples }) => [name, type, samples.map((sample) => sample.name)]),
      [
        ['i_info', 'gauge', ['i_info']],
        ['s', 'gauge', ['s']],
        ['u', 'untyped', ['u']],
      ],
    );
    assert.deepEqual(unused, ['g gaugehistogram']);
  });

  for (const [what, line] of [
    ['a comment after the value that is no exemplar', 'x 1 # note'],
    ['an exemplar without its label set', 'x 1 # 1.0'],
    ['a third token that is no timestamp', 'x 1 soon'],
    ['a timestamp followed by anything but an exemplar', 'x 1 1700000000000 2'],
  ] as const) {
    it(`still refuses ${what}`, () => {
      assert.throws(() => parseExposition(`${line}\n`), ExpositionParseError);
    });
  }
});
