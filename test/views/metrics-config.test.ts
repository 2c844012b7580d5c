import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerOmniMetrics } from '../../register';
import { loadMetricsConfig } from '../../views/metrics-config';

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
