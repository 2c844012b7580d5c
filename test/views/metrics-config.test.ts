import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerOmniMetrics } from '../../register';
import { loadMetricsConfig, MetricsConfigError } from '../../views/catalog/metrics-config';

describe('metrics config file', () => {
  let dir: string;
  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'omni-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('overrides buckets and adds families from YAML, used by registerOmniMetrics', async () => {
    const file = write(
      'metrics.yaml',
      [
        'buckets:',
        '  vllm:omni_audio_rtf: [0.5, 1, 2]',
        'families:',
        '  - name: myapp:cache_hits_total',
        '    type: counter',
        '    help: Cache hits.',
        '    labels: [model_name, stage]',
      ].join('\n'),
    );
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, configFile: file, logIntervalSeconds: 0 });
    handle.audio.observeAudioRtf(0, 0, 0.7);
    const text = await handle.metricsText();
    await handle.shutdown();
    assert.ok(text.includes('vllm:omni_audio_rtf_bucket{le="0.5",model_name="m",replica="0",stage="0"} 0.0\n'));
    assert.ok(text.includes('vllm:omni_audio_rtf_bucket{le="1.0",model_name="m",replica="0",stage="0"} 1.0\n'));
    assert.ok(text.includes('vllm:omni_audio_rtf_bucket{le="2.0",model_name="m",replica="0",stage="0"} 1.0\n'));
    assert.ok(text.includes('# HELP myapp:cache_hits_total Cache hits.\n# TYPE myapp:cache_hits_total counter\n'));
  });

  it('reads JSON the same way', () => {
    const file = write('metrics.json', JSON.stringify({ buckets: { 'vllm:e2e_request_latency_seconds': [1, 2] } }));
    assert.deepEqual(loadMetricsConfig(file).buckets, { 'vllm:e2e_request_latency_seconds': [1, 2] });
  });

  const failures: Array<[string, string, RegExp]> = [
    ['unknown family', 'buckets:\n  vllm:nope_seconds: [1]\n', /bad\.yaml: family "vllm:nope_seconds": unknown family/],
    ['not a histogram', 'buckets:\n  vllm:num_requests_running: [1]\n', /family "vllm:num_requests_running": is a gauge, only histograms have buckets/],
    ['unsorted buckets', 'buckets:\n  vllm:omni_audio_rtf: [1, 0.5]\n', /family "vllm:omni_audio_rtf": buckets must be sorted in strictly increasing order/],
    ['empty buckets', 'buckets:\n  vllm:omni_audio_rtf: []\n', /family "vllm:omni_audio_rtf": buckets must be a non-empty list of numbers/],
    ['non-numeric bound', 'buckets:\n  vllm:omni_audio_rtf: [1, "x"]\n', /family "vllm:omni_audio_rtf": bucket 1 is "x", not a finite number/],
    ['invalid name', 'families:\n  - {name: "9bad", type: counter, help: h}\n', /families\[0\]: invalid name "9bad"/],
    ['invalid label', 'families:\n  - {name: app_x, type: gauge, help: h, labels: ["bad-label"]}\n', /family "app_x": invalid label name "bad-label"/],
    [
      'reserved namespace',
      'families:\n  - {name: "vllm:mine", type: gauge, help: h}\n',
      /family "vllm:mine": the vllm: and vllm_omni: namespaces belong to the catalog/,
    ],
    ['bad type', 'families:\n  - {name: app_x, type: summary, help: h}\n', /family "app_x": invalid type "summary"/],
    ['unknown key', 'bucket: {}\n', /unknown top-level key "bucket"/],
    ['broken YAML', 'buckets: [\n', /bad\.yaml: not valid YAML/],
  ];
  for (const [what, text, message] of failures) {
    it(`fails at startup naming the file, the family and the problem: ${what}`, async () => {
      const file = write('bad.yaml', text);
      await assert.rejects(registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, configFile: file }), message);
    });
  }

  it('names a missing file', () => {
    assert.throws(() => loadMetricsConfig(join(dir, 'missing.yaml')), /missing\.yaml: cannot read metrics config/);
  });
});

describe('metrics config file: families whose printed names clash are refused before start', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'omni-config-clash-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes `families` as a YAML config and asserts loading it throws a MetricsConfigError with exactly `message` after the file name. */
  const refuses = (families: string[], message: string): void => {
    const file = join(dir, 'clash.yaml');
    writeFileSync(file, `families:\n${families.map((family) => `  - ${family}\n`).join('')}`);
    assert.throws(
      () => loadMetricsConfig(file),
      (error: unknown) => error instanceof MetricsConfigError && error.message === `${file}: ${message}`,
    );
  };

  it('a histogram h and a gauge h_count', () => {
    refuses(
      ['{name: app_h, type: histogram, help: h, buckets: [1]}', '{name: app_h_count, type: gauge, help: g}'],
      'family "app_h_count" (gauge) clashes with family "app_h" (histogram): both print app_h_count (exposed as app_h and app_h_count)',
    );
  });

  it('a histogram h and a gauge h_bucket, declared the other way round', () => {
    refuses(
      ['{name: app_h_bucket, type: gauge, help: g}', '{name: app_h, type: histogram, help: h, buckets: [1]}'],
      'family "app_h" (histogram) clashes with family "app_h_bucket" (gauge): both print app_h_bucket (exposed as app_h_bucket and app_h)',
    );
  });

  it('a counter c_total and a gauge c_created', () => {
    refuses(
      ['{name: app_c_total, type: counter, help: c}', '{name: app_c_created, type: gauge, help: g}'],
      'family "app_c_created" (gauge) clashes with family "app_c_total" (counter): both print app_c_created (exposed as app_c_total and app_c_created)',
    );
  });

  it('a counter c_total and a gauge c (the counter\u2019s OpenMetrics name)', () => {
    refuses(
      ['{name: app_c_total, type: counter, help: c}', '{name: app_c, type: gauge, help: g}'],
      'family "app_c" (gauge) clashes with family "app_c_total" (counter): both print app_c (exposed as app_c_total and app_c)',
    );
  });

  it('a custom target_info', () => {
    refuses(['{name: target_info, type: gauge, help: t}'], 'family "target_info" (gauge) clashes with the target_info family: both are exposed as target_info');
  });

  it('a family named like a process family\u2019s OpenMetrics name (process_cpu_seconds_total prints process_cpu_seconds)', () => {
    refuses(
      ['{name: process_cpu_seconds, type: gauge, help: g}'],
      'family "process_cpu_seconds" (gauge) clashes with the package\'s family "process_cpu_seconds_total" (counter): both print process_cpu_seconds (exposed as process_cpu_seconds_total and process_cpu_seconds)',
    );
  });

  it('a family named like a sample of a catalog histogram (the runtime\u2019s nodejs_gc_duration_seconds)', () => {
    refuses(
      ['{name: nodejs_gc_duration_seconds_sum, type: counter, help: c}'],
      'family "nodejs_gc_duration_seconds_sum" (counter) clashes with the package\'s family "nodejs_gc_duration_seconds" (histogram): both print nodejs_gc_duration_seconds_sum (exposed as nodejs_gc_duration_seconds and nodejs_gc_duration_seconds_sum_total)',
    );
  });

  it('an exact duplicate, and a counter declared with and without _total, as a MetricsConfigError naming the file', () => {
    refuses(
      ['{name: app_x, type: gauge, help: a}', '{name: app_x, type: gauge, help: b}'],
      'family "app_x" (gauge) clashes with family "app_x" (gauge): both are exposed as app_x',
    );
    refuses(
      ['{name: app_n, type: counter, help: a}', '{name: app_n_total, type: counter, help: b}'],
      'family "app_n_total" (counter) clashes with family "app_n" (counter): both are exposed as app_n_total',
    );
  });

  it('registerOmniMetrics refuses such a file before it starts anything', async () => {
    const file = join(dir, 'clash-start.yaml');
    writeFileSync(file, 'families:\n  - {name: app_h, type: histogram, help: h, buckets: [1]}\n  - {name: app_h_sum, type: gauge, help: g}\n');
    await assert.rejects(registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, configFile: file }), MetricsConfigError);
  });
});
