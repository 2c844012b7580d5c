import assert from 'node:assert/strict';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { renderStore } from '../support/exposition';
import { OmniPrometheusMetrics } from '../../instrumentation/recorders/pipeline-metrics';
import { registerOmniMetrics } from '../../register';
import { SECONDS_BUCKETS } from '../../views/catalog/buckets';
import { allowPrinted } from '../support/console-capture';
import { fixedClockStore } from '../views/store/store-fixture';

const SUCCESS_HELP =
  'Total requests by completion reason (stop / length / abort / ...). Aborts cover client-disconnect / cancellation paths in addition to upstream FinishReason.ABORT.';
const E2E_HELP = 'Pipeline-global end-to-end request latency in seconds (user arrival to complete response).';

/** The pipeline recorder on a fixed-clock store: series are created at 1700000000.5, 1700000001.5, … seconds. */
function pipelineWorkload() {
  const store = fixedClockStore({ logStats: false });
  const pipeline = new OmniPrometheusMetrics(store, { modelName: 'm', logStats: true });
  pipeline.setRunning(2);
  pipeline.requestSucceeded(0.3, 'stop');
  pipeline.requestSucceeded(7, 'length');
  pipeline.requestFailed();
  return store;
}

function block(text: string, first: string, lines: number): string {
  const start = text.indexOf(`${first}\n`);
  assert.ok(start >= 0, `${first} is printed`);
  return text.slice(start).split('\n').slice(0, lines).join('\n');
}

describe('store exposition: golden text', () => {
  it('0.0.4 text: every family, HELP/TYPE, series in creation order, `_created` as its own gauge family after counters and histograms', () => {
    const text = renderStore(pipelineWorkload(), { format: 'text', createdSeries: true }).toString('utf8');
    assert.equal(
      block(text, '# HELP vllm:omni_num_requests_running Number of requests currently running across all pipeline stages.', 6),
      [
        '# HELP vllm:omni_num_requests_running Number of requests currently running across all pipeline stages.',
        '# TYPE vllm:omni_num_requests_running gauge',
        'vllm:omni_num_requests_running{model_name="m"} 2.0',
        '# HELP vllm:omni_num_requests_waiting Number of requests waiting to be scheduled.',
        '# TYPE vllm:omni_num_requests_waiting gauge',
        'vllm:omni_num_requests_waiting{model_name="m"} 0.0',
      ].join('\n'),
    );
    // Creation order: running (…0.5), waiting (…1.5), e2e (…2.5), prompt and generation tokens (…3.5, …4.5) at construction; then stop, length, abort.
    assert.equal(
      block(text, `# HELP vllm:omni_requests_success_total ${SUCCESS_HELP}`, 8),
      [
        `# HELP vllm:omni_requests_success_total ${SUCCESS_HELP}`,
        '# TYPE vllm:omni_requests_success_total counter',
        'vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 1.0',
        'vllm:omni_requests_success_total{finished_reason="length",model_name="m"} 1.0',
        'vllm:omni_requests_success_total{finished_reason="abort",model_name="m"} 1.0',
        `# HELP vllm:omni_requests_success_created ${SUCCESS_HELP}`,
        '# TYPE vllm:omni_requests_success_created gauge',
        'vllm:omni_requests_success_created{finished_reason="stop",model_name="m"} 1.7000000055e+09',
      ].join('\n'),
    );
    const e2e = block(text, `# HELP vllm:omni_e2e_request_latency_s ${E2E_HELP}`, 2 + SECONDS_BUCKETS.length + 1 + 2 + 3);
    assert.equal(
      e2e,
      [
        `# HELP vllm:omni_e2e_request_latency_s ${E2E_HELP}`,
        '# TYPE vllm:omni_e2e_request_latency_s histogram',
        ...SECONDS_BUCKETS.map(
          (bound) =>
            `vllm:omni_e2e_request_latency_s_bucket{le="${bound === Math.trunc(bound) ? `${bound}.0` : bound}",model_name="m"} ${bound < 0.3 ? 0 : bound < 7 ? 1 : 2}.0`,
        ),
        'vllm:omni_e2e_request_latency_s_bucket{le="+Inf",model_name="m"} 2.0',
        'vllm:omni_e2e_request_latency_s_count{model_name="m"} 2.0',
        'vllm:omni_e2e_request_latency_s_sum{model_name="m"} 7.3',
        `# HELP vllm:omni_e2e_request_latency_s_created ${E2E_HELP}`,
        '# TYPE vllm:omni_e2e_request_latency_s_created gauge',
        'vllm:omni_e2e_request_latency_s_created{model_name="m"} 1.7000000025e+09',
      ].join('\n'),
    );
    assert.ok(
      text.includes(
        '# HELP vllm:omni_audio_ttfp_s Time from request arrival to first audio packet/frame, in seconds.\n# TYPE vllm:omni_audio_ttfp_s histogram\n# HELP',
      ),
      'a family without series: HELP/TYPE only, no `_created` block',
    );
  });

  it('OpenMetrics: `_created` right after each series\u2019 samples, counter metadata without `_total`', () => {
    const text = renderStore(pipelineWorkload(), { format: 'openmetrics', createdSeries: true }).toString('utf8');
    assert.equal(
      block(text, `# HELP vllm:omni_requests_success ${SUCCESS_HELP}`, 4),
      [
        `# HELP vllm:omni_requests_success ${SUCCESS_HELP}`,
        '# TYPE vllm:omni_requests_success counter',
        'vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 1.0',
        'vllm:omni_requests_success_created{finished_reason="stop",model_name="m"} 1.7000000055e+09',
      ].join('\n'),
    );
    assert.ok(
      text.includes('vllm:omni_e2e_request_latency_s_sum{model_name="m"} 7.3\nvllm:omni_e2e_request_latency_s_created{model_name="m"} 1.7000000025e+09\n'),
    );
  });

  it('a histogram whose sum is negative: text prints `_count` and `_sum` as prometheus_client does; OpenMetrics, which forbids a negative sum, leaves both out', () => {
    const store = fixedClockStore();
    store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', '0']).record(-0.5);
    const text = renderStore(store, { format: 'text', createdSeries: false }).toString('utf8');
    assert.ok(
      text.includes(
        'vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m",replica="0",stage="0"} 1.0\nvllm:time_to_first_token_seconds_count{model_name="m",replica="0",stage="0"} 1.0\nvllm:time_to_first_token_seconds_sum{model_name="m",replica="0",stage="0"} -0.5\n',
      ),
    );
    const openMetrics = renderStore(store, { format: 'openmetrics', createdSeries: false }).toString('utf8');
    assert.ok(openMetrics.includes('vllm:time_to_first_token_seconds_bucket{le="0.001",model_name="m",replica="0",stage="0"} 1.0\n'));
    assert.ok(openMetrics.includes('vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m",replica="0",stage="0"} 1.0\n# HELP'));
    assert.ok(!openMetrics.includes('vllm:time_to_first_token_seconds_count'));
    assert.ok(!openMetrics.includes('vllm:time_to_first_token_seconds_sum'));
  });

  it('without `_created`, nothing else changes', () => {
    const store = pipelineWorkload();
    const withCreated = renderStore(store, { format: 'text', createdSeries: true }).toString('utf8');
    const without = renderStore(store, { format: 'text', createdSeries: false }).toString('utf8');
    assert.ok(!without.includes('_created'));
    const kept = withCreated.split('\n').filter((line) => !/_created[ {]/.test(line) && !/^# (HELP|TYPE) \S+_created /.test(line));
    assert.equal(kept.join('\n'), without);
  });
});

describe('Prometheus reader over the store', () => {
  it('`_created` is on by default, off with createdSeries: false, and off with PROMETHEUS_DISABLE_CREATED_SERIES as prometheus_client reads it', async () => {
    const scrape = async (options: { createdSeries?: boolean }): Promise<string> => {
      const handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        prometheus: { createdSeries: options.createdSeries },
        exporters: [],
        selfCheck: false,
      });
      try {
        return await handle.metricsText();
      } finally {
        await handle.shutdown();
      }
    };
    assert.match(await scrape({}), /^vllm:omni_e2e_request_latency_s_created\{model_name="m"\} 1\.\d+e\+09$/m);
    assert.ok(!(await scrape({ createdSeries: false })).includes('_created'));
    for (const value of ['True', 'true', '1', 't', 'T']) {
      process.env.PROMETHEUS_DISABLE_CREATED_SERIES = value;
      try {
        assert.ok(!(await scrape({})).includes('_created'), `PROMETHEUS_DISABLE_CREATED_SERIES=${value}`);
        assert.match(await scrape({ createdSeries: true }), /_created/, 'the option wins over the variable');
      } finally {
        delete process.env.PROMETHEUS_DISABLE_CREATED_SERIES;
      }
    }
    process.env.PROMETHEUS_DISABLE_CREATED_SERIES = 'False';
    try {
      assert.match(await scrape({}), /_created/);
    } finally {
      delete process.env.PROMETHEUS_DISABLE_CREATED_SERIES;
    }
  });

  it('scrapes that overlap share one rendering; the next one renders anew', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, exporters: [], selfCheck: false });
    const reader = handle.prometheusReader as OmniPrometheusReader;
    try {
      const [first, second] = await Promise.all([reader.metricsBytes('text'), reader.metricsBytes('text')]);
      assert.equal(first, second, 'the very same bytes object');
      handle.pipeline.requestSucceeded(1, 'stop');
      const third = await reader.metricsBytes('text');
      assert.notEqual(third, first);
      assert.ok(third.toString().includes('vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 1.0'));
    } finally {
      await handle.shutdown();
    }
  });

  it('instruments of your own on the same provider follow the store\u2019s families; one named like a catalog family is left out with a warning', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: { createdSeries: false }, exporters: [], selfCheck: false });
    try {
      const meter = (handle.meterProvider as MeterProvider).getMeter('my-app');
      meter.createCounter('app_jobs', { description: 'Jobs.' }).add(2, { kind: 'tts' });
      meter.createGauge('vllm:omni_num_requests_running', { description: 'A clash.' }).record(99);
      handle.pipeline.setRunning(1);
      const text = await allowPrinted(
        [
          "omni-otel-metrics: the application's gauge vllm:omni_num_requests_running is left out of /metrics: its name vllm:omni_num_requests_running clashes with the family vllm:omni_num_requests_running, which is printed. Rename one of them.",
        ],
        () => handle.metricsText(),
      );
      assert.ok(text.endsWith('# HELP app_jobs_total Jobs.\n# TYPE app_jobs_total counter\napp_jobs_total{kind="tts"} 2.0\n'));
      assert.ok(text.includes('vllm:omni_num_requests_running{model_name="m"} 0.0\n'), 'logStats off: the store\u2019s own value');
      assert.equal(text.match(/^# HELP vllm:omni_num_requests_running /gm)?.length, 1, 'printed once');
      assert.doesNotMatch(text, /^vllm:omni_num_requests_running\S* 99/m, 'the clashing instrument\u2019s value is not printed');
    } finally {
      await handle.shutdown();
    }
  });
});
