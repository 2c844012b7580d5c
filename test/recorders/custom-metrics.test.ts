import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { DataPoint, Histogram, MetricData } from '@opentelemetry/sdk-metrics';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { declaredFamilyNames, histogramOf, parseGoFloat, sampleValue, seriesOf } from '../support/exposition';
import { checkMetrics } from '../support/promtool';
import { withWarnings } from '../views/store/store-fixture';
import { MetricsConfigError, validateMetricsConfig } from '../../views/catalog/metrics-config';
import { needPeer } from '../support/peers/need-peer';
import { debianPython } from '../support/python-parity';

const CONFIG = [
  'families:',
  '  - name: myapp:cache_hits_total',
  '    type: counter',
  '    help: TTS cache hits.',
  '    labels: [model_name, stage, cache]',
  '  - name: myapp:queue_depth',
  '    type: gauge',
  '    help: Requests queued in front of the synthesizer.',
  '    labels: [model_name, stage]',
  '  - name: myapp:synth_latency_seconds',
  '    type: histogram',
  '    help: Synthesizer latency in seconds.',
  '    labels: [voice, model_name]',
  '    buckets: [0.1, 0.5, 1]',
  '  - name: myapp:restarts',
  '    type: counter',
  '    help: Synthesizer restarts.',
  '  - name: myapp:replica_load',
  '    type: gauge',
  '    help: Load of one replica.',
  '    labels: [model_name, stage, replica]',
  '',
].join('\n');

const DECLARED =
  'declared custom families: myapp:cache_hits_total (counter), myapp:queue_depth (gauge), myapp:synth_latency_seconds (histogram), myapp:restarts_total (counter), myapp:replica_load (gauge)';

/** The lines of one family's block (its HELP/TYPE and samples, then its `_created` block), `_created` values replaced by `T`. */
function familyBlock(text: string, family: string, created: { from: number; to: number }): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`# HELP ${family} `));
  assert.ok(start >= 0, `${family} is declared`);
  const createdFamily = `${family.replace(/_total$/, '')}_created`;
  const block: string[] = [lines[start] as string];
  for (const line of lines.slice(start + 1)) {
    if (line === '' || (line.startsWith('# HELP ') && !line.startsWith(`# HELP ${createdFamily} `))) break;
    const createdSample = line.startsWith(createdFamily) ? /^(\S+) (\S+)$/.exec(line) : null;
    if (createdSample) {
      const millis = parseGoFloat(createdSample[2] as string) * 1000;
      assert.ok(millis >= created.from - 1 && millis <= created.to + 1, `${line}: created while the test ran`);
      block.push(`${createdSample[1]} T`);
    } else {
      block.push(line);
    }
  }
  return block;
}

/** The OTLP view of one family, from a producer of the store. */
async function collected(handle: OmniMetricsHandle, name: string): Promise<MetricData | undefined> {
  const { resourceMetrics, errors } = await handle.createMetricProducer().collect();
  assert.deepEqual(errors, []);
  const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name);
  assert.ok(metrics.length <= 1, `${name} is collected once`);
  return metrics[0];
}

describe('recorders: OmniCustomMetrics (families from the config file)', () => {
  let dir: string;
  let configFile: string;
  let handle: OmniMetricsHandle;
  let started: number;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'omni-custom-'));
    configFile = join(dir, 'metrics.yaml');
    writeFileSync(configFile, CONFIG);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const register = (): Promise<OmniMetricsHandle> => registerOmniMetrics({ modelName: 'm', stagePools: [1], configFile, prometheus: false, exporters: [] });

  beforeEach(async () => {
    started = Date.now();
    handle = await register();
  });
  afterEach(() => handle.shutdown());

  it('records a counter, a gauge and a histogram into exactly one block per family, model_name filled in', async () => {
    const hits = handle.custom.counter<'stage' | 'cache'>('myapp:cache_hits_total');
    hits.add(2, { stage: 0, cache: 'hit' });
    hits.add(1, { stage: '0', cache: 'miss' });
    hits.bind({ stage: 0, cache: 'hit' }).add(3);
    const depth = handle.custom.gauge<'model_name' | 'stage'>('myapp:queue_depth');
    depth.set(4, { stage: 1 });
    depth.set(2.5, { stage: 1 });
    const latency = handle.custom.histogram<'voice'>('myapp:synth_latency_seconds');
    latency.observe(0.25, { voice: 'alto' });
    latency.observe(2, { voice: 'alto' });
    latency.bind({ voice: 'bass' }).observe(0.1);
    handle.custom.counter('myapp:restarts').add(1);

    const text = await handle.metricsText();
    const created = { from: started, to: Date.now() };
    assert.deepEqual(familyBlock(text, 'myapp:cache_hits_total', created), [
      '# HELP myapp:cache_hits_total TTS cache hits.',
      '# TYPE myapp:cache_hits_total counter',
      'myapp:cache_hits_total{cache="hit",model_name="m",stage="0"} 5.0',
      'myapp:cache_hits_total{cache="miss",model_name="m",stage="0"} 1.0',
      '# HELP myapp:cache_hits_created TTS cache hits.',
      '# TYPE myapp:cache_hits_created gauge',
      'myapp:cache_hits_created{cache="hit",model_name="m",stage="0"} T',
      'myapp:cache_hits_created{cache="miss",model_name="m",stage="0"} T',
    ]);
    assert.deepEqual(familyBlock(text, 'myapp:queue_depth', created), [
      '# HELP myapp:queue_depth Requests queued in front of the synthesizer.',
      '# TYPE myapp:queue_depth gauge',
      'myapp:queue_depth{model_name="m",stage="1"} 2.5',
    ]);
    assert.deepEqual(familyBlock(text, 'myapp:synth_latency_seconds', created), [
      '# HELP myapp:synth_latency_seconds Synthesizer latency in seconds.',
      '# TYPE myapp:synth_latency_seconds histogram',
      'myapp:synth_latency_seconds_bucket{le="0.1",model_name="m",voice="alto"} 0.0',
      'myapp:synth_latency_seconds_bucket{le="0.5",model_name="m",voice="alto"} 1.0',
      'myapp:synth_latency_seconds_bucket{le="1.0",model_name="m",voice="alto"} 1.0',
      'myapp:synth_latency_seconds_bucket{le="+Inf",model_name="m",voice="alto"} 2.0',
      'myapp:synth_latency_seconds_count{model_name="m",voice="alto"} 2.0',
      'myapp:synth_latency_seconds_sum{model_name="m",voice="alto"} 2.25',
      'myapp:synth_latency_seconds_bucket{le="0.1",model_name="m",voice="bass"} 1.0',
      'myapp:synth_latency_seconds_bucket{le="0.5",model_name="m",voice="bass"} 1.0',
      'myapp:synth_latency_seconds_bucket{le="1.0",model_name="m",voice="bass"} 1.0',
      'myapp:synth_latency_seconds_bucket{le="+Inf",model_name="m",voice="bass"} 1.0',
      'myapp:synth_latency_seconds_count{model_name="m",voice="bass"} 1.0',
      'myapp:synth_latency_seconds_sum{model_name="m",voice="bass"} 0.1',
      '# HELP myapp:synth_latency_seconds_created Synthesizer latency in seconds.',
      '# TYPE myapp:synth_latency_seconds_created gauge',
      'myapp:synth_latency_seconds_created{model_name="m",voice="alto"} T',
      'myapp:synth_latency_seconds_created{model_name="m",voice="bass"} T',
    ]);
    assert.deepEqual(familyBlock(text, 'myapp:restarts_total', created), [
      '# HELP myapp:restarts_total Synthesizer restarts.',
      '# TYPE myapp:restarts_total counter',
      'myapp:restarts_total 1.0',
      '# HELP myapp:restarts_created Synthesizer restarts.',
      '# TYPE myapp:restarts_created gauge',
      'myapp:restarts_created T',
    ]);
    // Declared but never recorded: HELP/TYPE only, as every catalog family.
    assert.deepEqual(familyBlock(text, 'myapp:replica_load', created), ['# HELP myapp:replica_load Load of one replica.', '# TYPE myapp:replica_load gauge']);
    const declared = declaredFamilyNames(text);
    assert.equal(new Set(declared).size, declared.length, 'no family is declared twice');
    for (const family of ['myapp:cache_hits_total', 'myapp:queue_depth', 'myapp:synth_latency_seconds', 'myapp:restarts_total', 'myapp:replica_load']) {
      assert.equal(declared.filter((name) => name === family).length, 1, `${family}: one block`);
    }
  });

  it('the OTLP side sees the same series, through a producer of the store', async () => {
    handle.custom.counter('myapp:cache_hits_total').add(3, { stage: 0, cache: 'hit' });
    handle.custom.gauge('myapp:queue_depth').set(7, { stage: 2 });
    handle.custom.histogram('myapp:synth_latency_seconds').observe(0.3, { voice: 'alto' });

    const hits = await collected(handle, 'myapp:cache_hits_total');
    assert.ok(hits);
    assert.equal(hits.descriptor.description, 'TTS cache hits.');
    assert.deepEqual(
      (hits.dataPoints as Array<DataPoint<number>>).map((p) => [p.attributes, p.value]),
      [[{ model_name: 'm', stage: '0', cache: 'hit' }, 3]],
    );
    const depth = await collected(handle, 'myapp:queue_depth');
    assert.deepEqual(
      (depth?.dataPoints as Array<DataPoint<number>>).map((p) => [p.attributes, p.value]),
      [[{ model_name: 'm', stage: '2' }, 7]],
    );
    const latency = await collected(handle, 'myapp:synth_latency_seconds');
    assert.deepEqual(
      (latency?.dataPoints as Array<DataPoint<Histogram>>).map((p) => [p.attributes, p.value.buckets, p.value.count, p.value.sum]),
      [[{ voice: 'alto', model_name: 'm' }, { boundaries: [0.1, 0.5, 1], counts: [0, 1, 0, 0] }, 1, 0.3]],
    );
    assert.equal(await collected(handle, 'myapp:replica_load'), undefined, 'no series, no metric');
  });

  it('finds a counter by its exposed name or by the name the config file gave it, and hands out one recorder per family', () => {
    assert.equal(handle.custom.counter('myapp:restarts'), handle.custom.counter('myapp:restarts_total'));
    assert.equal(handle.custom.counter('myapp:restarts').family.name, 'myapp:restarts_total');
    assert.deepEqual(
      handle.custom.families.map((family) => family.name),
      ['myapp:cache_hits_total', 'myapp:queue_depth', 'myapp:synth_latency_seconds', 'myapp:restarts_total', 'myapp:replica_load'],
    );
  });

  it('an undeclared name or the wrong type throws at lookup, naming the family and the declared ones', async () => {
    assert.throws(() => handle.custom.counter('myapp:nope_total'), {
      name: 'RangeError',
      message: `OmniCustomMetrics.counter("myapp:nope_total"): no custom family has that name; ${DECLARED}`,
    });
    assert.throws(() => handle.custom.gauge('myapp:cache_hits_total'), {
      name: 'TypeError',
      message: `OmniCustomMetrics.gauge("myapp:cache_hits_total"): myapp:cache_hits_total is declared as a counter, not a gauge (use counter()); ${DECLARED}`,
    });
    assert.throws(() => handle.custom.histogram('myapp:queue_depth'), {
      name: 'TypeError',
      message: `OmniCustomMetrics.histogram("myapp:queue_depth"): myapp:queue_depth is declared as a gauge, not a histogram (use gauge()); ${DECLARED}`,
    });
    assert.throws(() => handle.custom.gauge('vllm:omni_num_requests_running'), {
      name: 'RangeError',
      message: `OmniCustomMetrics.gauge("vllm:omni_num_requests_running"): vllm:omni_num_requests_running is a catalog family fed by the package's recorders, not a custom family; ${DECLARED}`,
    });
    const bare = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, exporters: [] });
    try {
      assert.throws(() => bare.custom.histogram('myapp:synth_latency_seconds'), {
        name: 'RangeError',
        message:
          'OmniCustomMetrics.histogram("myapp:synth_latency_seconds"): no custom family has that name; declared custom families: none (declare them under "families:" in the configFile)',
      });
    } finally {
      await bare.shutdown();
    }
  });

  it('bad values never throw: nothing is recorded, no series is created, one warning per family', async () => {
    const hits = handle.custom.counter('myapp:cache_hits_total');
    const depth = handle.custom.gauge('myapp:queue_depth');
    const latency = handle.custom.histogram('myapp:synth_latency_seconds');
    const { warnings } = withWarnings(() => {
      for (const bad of [NaN, -1, Infinity, -Infinity, '3' as unknown as number, undefined as unknown as number, Symbol('x') as unknown as number]) {
        assert.doesNotThrow(() => hits.add(bad, { stage: 0, cache: 'hit' }));
      }
      for (const bad of [NaN, Infinity, null as unknown as number, 10n as unknown as number]) {
        assert.doesNotThrow(() => depth.set(bad, { stage: 0 }));
        assert.doesNotThrow(() => latency.observe(bad, { voice: 'alto' }));
      }
    });
    assert.deepEqual(warnings, [
      'omni-otel-metrics: myapp:cache_hits_total: NaN dropped (a counter takes finite increments >= 0)',
      'omni-otel-metrics: myapp:queue_depth: NaN dropped (a gauge takes finite values)',
      'omni-otel-metrics: myapp:synth_latency_seconds: NaN dropped (a histogram takes finite values)',
    ]);
    const text = await handle.metricsText();
    for (const name of ['myapp:cache_hits_total', 'myapp:queue_depth', 'myapp:synth_latency_seconds_count']) assert.deepEqual(seriesOf(text, name), [], name);
  });

  it('a bound series drops bad values the same way, and keeps its good ones', async () => {
    const bound = handle.custom.counter('myapp:cache_hits_total').bind({ stage: 0, cache: 'hit' });
    const { warnings } = withWarnings(() => {
      bound.add(2);
      assert.doesNotThrow(() => bound.add(-1));
      assert.doesNotThrow(() => bound.add(NaN));
    });
    assert.deepEqual(warnings, [
      'omni-otel-metrics: myapp:cache_hits_total{cache="hit",model_name="m",stage="0"}: -1 dropped (a counter takes finite increments >= 0)',
    ]);
    assert.equal(sampleValue(await handle.metricsText(), 'myapp:cache_hits_total', { model_name: 'm', stage: '0', cache: 'hit' }), 2);
  });

  it('labels that are not exactly the declared ones never throw: the record is dropped with one warning per kind of mistake', async () => {
    const hits = handle.custom.counter('myapp:cache_hits_total');
    const restarts = handle.custom.counter('myapp:restarts');
    const takes = '(myapp:cache_hits_total takes labels stage, cache; model_name is filled in)';
    const { warnings } = withWarnings(() => {
      const calls: Array<() => void> = [
        () => hits.add(1, { stage: 0 }),
        () => hits.add(1, { stage: 0 }),
        () => hits.add(1),
        () => hits.add(1, { stage: 0, cache: 'hit', region: 'eu' }),
        () => hits.add(1, { stage: 0, cache: 'hit', model_name: 'm' }),
        () => hits.add(1, { stage: 0, cache: { hit: true } } as never),
        () => hits.add(1, { stage: 0, cache: null } as never),
        () => hits.add(1, 'stage=0' as never),
        () => hits.add(1, [0, 'hit'] as never),
        () => hits.bind({ cache: 'hit' }).add(1),
        () => hits.bind({ cache: 'hit' }).add(1),
        () =>
          hits.add(1, {
            get stage(): string {
              throw new Error('getter failed');
            },
            cache: 'hit',
          }),
        () => restarts.add(1, { stage: 0 }),
      ];
      for (const call of calls) assert.doesNotThrow(call);
    });
    // One line per family and kind of mistake: the first of each kind is named, the rest of that kind (other labels missing, a null after an object) are not.
    const once = '; said once per kind of mistake';
    assert.deepEqual(warnings, [
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, label cache missing ${takes}${once}`,
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, label "region" not declared ${takes}${once}`,
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, model_name is filled in by the recorder ("m"): leave it out ${takes}${once}`,
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, label cache is a object, not a string or number ${takes}${once}`,
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, labels must be an object keyed by label name, not a string ${takes}${once}`,
      'omni-otel-metrics: myapp:cache_hits_total: add dropped a call it could not record (getter failed)',
      `omni-otel-metrics: myapp:restarts_total: record dropped, label "stage" not declared (myapp:restarts_total takes no labels)${once}`,
    ]);
    const text = await handle.metricsText();
    assert.deepEqual(seriesOf(text, 'myapp:cache_hits_total'), []);
    assert.deepEqual(seriesOf(text, 'myapp:restarts_total'), []);
  });

  it('label values that differ only in where a separator character falls are different series', async () => {
    const hits = handle.custom.counter('myapp:cache_hits_total');
    hits.add(1, { stage: 'a\u0000', cache: 'b' });
    hits.add(2, { stage: 'a', cache: '\u0000b' });
    hits.add(4, { stage: 'a\u0001', cache: 'b' });
    hits.add(8, { stage: 'a', cache: '\u0001b' });
    const text = await handle.metricsText();
    assert.equal(seriesOf(text, 'myapp:cache_hits_total').length, 4);
    assert.equal(sampleValue(text, 'myapp:cache_hits_total', { model_name: 'm', stage: 'a\u0000', cache: 'b' }), 1);
    assert.equal(sampleValue(text, 'myapp:cache_hits_total', { model_name: 'm', stage: 'a', cache: '\u0000b' }), 2);
    assert.equal(sampleValue(text, 'myapp:cache_hits_total', { model_name: 'm', stage: 'a\u0001', cache: 'b' }), 4);
    assert.equal(sampleValue(text, 'myapp:cache_hits_total', { model_name: 'm', stage: 'a', cache: '\u0001b' }), 8);
  });

  it('a bound series of a removed replica leaves the scrape, and starts over from zero if recorded again', async () => {
    const load = handle.custom.gauge('myapp:replica_load');
    const bound = load.bind({ stage: 0, replica: 0 });
    bound.set(0.5);
    load.set(0.25, { stage: 0, replica: 1 });
    assert.equal(handle.removeReplica(0, 0), true);
    assert.deepEqual(seriesOf(await handle.metricsText(), 'myapp:replica_load'), [{ model_name: 'm', stage: '0', replica: '1' }]);
    bound.set(0.75);
    const text = await handle.metricsText();
    assert.equal(sampleValue(text, 'myapp:replica_load', { model_name: 'm', stage: '0', replica: '0' }), 0.75);
    assert.equal(sampleValue(text, 'myapp:replica_load', { model_name: 'm', stage: '0', replica: '1' }), 0.25);
  });

  it('property: arbitrary label values and finite values round-trip to exact sums, counts and last values', async () => {
    // Any code point, and short strings over a few characters (separators, escapes) so label sets that differ only in where a character falls come up.
    const label = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.string({ unit: fc.constantFrom('a', '\u0000', '\u0001', '"', '\\', '\n', 'é', '😀'), maxLength: 3 }),
    );
    // Two labels cut from one NUL-joined text at different places: label sets whose values, joined, read the same.
    const cut = fc
      .record({ parts: fc.array(fc.constantFrom('', 'a', 'b'), { minLength: 3, maxLength: 3 }), at: fc.constantFrom(1, 2) })
      .map(({ parts, at }) => ({ stage: parts.slice(0, at).join('\u0000'), cache: parts.slice(at).join('\u0000') }));
    const counterLabels = fc.oneof(fc.record({ stage: label, cache: label }), cut);
    const increment = fc.double({ min: 0, max: 1e300, noNaN: true });
    const records = fc.array(
      fc.tuple(counterLabels, increment).map(([labels, value]) => ({ ...labels, value })),
      { maxLength: 12 },
    );
    const gauges = fc.array(fc.record({ stage: label, value: fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (v === 0 ? 0 : v)) }), {
      maxLength: 12,
    });
    const observations = fc.array(fc.record({ voice: label, value: fc.double({ min: -1e300, max: 1e300, noNaN: true }) }), { maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(records, gauges, observations, async (counterRecords, gaugeRecords, histogramRecords) => {
        const run = await register();
        try {
          const hits = run.custom.counter<'stage' | 'cache'>('myapp:cache_hits_total');
          const depth = run.custom.gauge<'stage'>('myapp:queue_depth');
          const latency = run.custom.histogram<'voice'>('myapp:synth_latency_seconds');
          for (const { stage, cache, value } of counterRecords) hits.add(value, { stage, cache });
          for (const { stage, value } of gaugeRecords) depth.set(value, { stage });
          for (const { voice, value } of histogramRecords) latency.observe(value, { voice });

          const sums = new Map<string, { stage: string; cache: string; sum: number }>();
          for (const { stage, cache, value } of counterRecords) {
            const key = JSON.stringify([stage, cache]);
            const entry = sums.get(key) ?? { stage, cache, sum: 0 };
            entry.sum += value;
            sums.set(key, entry);
          }
          const last = new Map<string, number>();
          for (const { stage, value } of gaugeRecords) last.set(stage, value);
          const observed = new Map<string, number[]>();
          for (const { voice, value } of histogramRecords) observed.set(voice, [...(observed.get(voice) ?? []), value]);

          const text = await run.metricsText();
          assert.equal(seriesOf(text, 'myapp:cache_hits_total').length, sums.size);
          for (const { stage, cache, sum } of sums.values()) {
            assert.equal(sampleValue(text, 'myapp:cache_hits_total', { model_name: 'm', stage, cache }), sum);
          }
          assert.equal(seriesOf(text, 'myapp:queue_depth').length, last.size);
          for (const [stage, value] of last) assert.equal(sampleValue(text, 'myapp:queue_depth', { model_name: 'm', stage }), value);
          assert.equal(seriesOf(text, 'myapp:synth_latency_seconds_count').length, observed.size);
          for (const [voice, values] of observed) {
            const histogram = histogramOf(text, 'myapp:synth_latency_seconds', { model_name: 'm', voice });
            assert.equal(histogram?.count, values.length);
            assert.equal(
              histogram?.sum,
              values.reduce((sum, value) => sum + value, 0),
            );
            assert.deepEqual(
              histogram?.buckets.map(([, count]) => count),
              [0.1, 0.5, 1, Infinity].map((bound) => values.filter((value) => value <= bound).length),
            );
          }

          const otlpHits = await collected(run, 'myapp:cache_hits_total');
          const points = (otlpHits?.dataPoints ?? []) as Array<DataPoint<number>>;
          assert.deepEqual(
            points.map((p) => [p.attributes.stage, p.attributes.cache, p.value]),
            [...sums.values()].map(({ stage, cache, sum }) => [stage, cache, sum]),
          );
        } finally {
          await run.shutdown();
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** Per exposition, what Python prometheus_client's parsers read from a string and from a file opened in text mode. */
type PythonRead = { samples: number; help: Record<string, string> } | { error: string };

function pythonRead(expositions: ReadonlyArray<[format: 'text' | 'openmetrics', text: string]>): PythonRead[] {
  const script = join(__dirname, '..', 'views', 'fixtures', 'parse_expositions.py');
  return JSON.parse(execFileSync(debianPython(), [script], { input: JSON.stringify(expositions), encoding: 'utf8' })) as PythonRead[];
}

describe('recorders: custom families print an exposition every parser accepts', function () {
  needPeer('debian-prometheus', this);
  needPeer('debian-prometheus-client', this);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'omni-custom-parse-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Registers with `config`, records one value into every family, and returns both formats with target_info and `_created`. */
  async function render(config: string, record: (handle: OmniMetricsHandle) => void): Promise<[text: string, openMetrics: string]> {
    const configFile = join(dir, 'metrics.yaml');
    writeFileSync(configFile, config);
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      configFile,
      prometheus: { host: '127.0.0.1', port: 0, withTargetInfo: true, createdSeries: true },
    });
    try {
      record(handle);
      return [await handle.metricsText('text'), await handle.metricsText('openmetrics')];
    } finally {
      await handle.shutdown();
    }
  }

  it('a HELP text with \\r is refused, naming the file and the family', async () => {
    const configFile = join(dir, 'cr.yaml');
    writeFileSync(configFile, 'families:\n  - {name: app_x, type: gauge, help: "first\\rsecond"}\n');
    await assert.rejects(
      registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, configFile }),
      (error: unknown) =>
        error instanceof MetricsConfigError &&
        error.message ===
          `${configFile}: family "app_x": help contains "\\r", which readers of the exposition take for a line break (a newline is fine: it is printed escaped)`,
    );
  });

  it('HELP texts with newlines, backslashes, quotes, tabs and non-ASCII are read back exactly by promtool and both Python parsers, from a string and from a file', async () => {
    const help = 'Line one\nline "two" with \\ a backslash,\ta tab and ünïcödé ✓.';
    const [text, openMetrics] = await render(
      `families:\n  - {name: app_c_total, type: counter, help: ${JSON.stringify(help)}}\n  - {name: app_h, type: histogram, help: ${JSON.stringify(help)}, buckets: [1]}\n`,
      (handle) => {
        handle.custom.counter('app_c_total').add(1);
        handle.custom.histogram('app_h').observe(0.5);
      },
    );
    assert.equal((await checkMetrics(text)).parseError, undefined);
    const [fromText, fromOpenMetrics] = pythonRead([
      ['text', text],
      ['openmetrics', openMetrics],
    ]);
    assert.ok(fromText !== undefined && 'help' in fromText, JSON.stringify(fromText));
    assert.ok(fromOpenMetrics !== undefined && 'help' in fromOpenMetrics, JSON.stringify(fromOpenMetrics));
    assert.deepEqual([fromText.help.app_c, fromText.help.app_c_created, fromText.help.app_h, fromText.help.app_h_created], [help, help, help, help]);
    assert.deepEqual([fromOpenMetrics.help.app_c, fromOpenMetrics.help.app_h], [help, help]);
  });

  it('property: whatever set of families the config loader accepts prints an exposition promtool and both Python parsers accept', async () => {
    const stems = [
      'app',
      'app_total',
      'app_created',
      'app_count',
      'app_bucket',
      'app_sum',
      'app_info',
      'target',
      'target_info',
      'process_cpu_seconds',
      'nodejs_gc_duration_seconds_count',
    ];
    const family = fc.record({ name: fc.constantFrom(...stems), type: fc.constantFrom('counter', 'gauge', 'histogram') });
    const accepted: Array<[string, string]> = [];
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(family, { minLength: 1, maxLength: 3 }), async (families) => {
        const document = {
          families: families.map(({ name, type }) => ({ name, type, help: `${type} ${name}`, ...(type === 'histogram' ? { buckets: [1] } : {}) })),
        };
        try {
          validateMetricsConfig(document, 'property');
        } catch (error) {
          assert.ok(error instanceof MetricsConfigError, String(error));
          refused += 1;
          return;
        }
        const config = `families:\n${document.families.map((f) => `  - ${JSON.stringify(f)}\n`).join('')}`;
        accepted.push(
          await render(config, (handle) => {
            for (const { name, type } of families) {
              if (type === 'counter') handle.custom.counter(name).add(1);
              else if (type === 'gauge') handle.custom.gauge(name).set(1);
              else handle.custom.histogram(name).observe(0.5);
            }
          }),
        );
      }),
      { numRuns: 40, seed: 19 },
    );
    assert.ok(accepted.length >= 5 && refused >= 5, `${accepted.length} accepted, ${refused} refused`);
    const reads = pythonRead(accepted.flatMap(([text, openMetrics]) => [['text', text] as const, ['openmetrics', openMetrics] as const]));
    reads.forEach((read, i) => assert.ok('samples' in read, `${JSON.stringify(read)}\n${accepted[Math.floor(i / 2)]?.[i % 2]}`));
    for (const [text] of accepted) assert.equal((await checkMetrics(text)).parseError, undefined, text);
  });
});
