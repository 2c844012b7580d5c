import assert from 'node:assert/strict';
import { MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { serializePrometheus } from '../../exporters/prometheus-serializer';
import { expectPrinted } from '../support/console-capture';
import { registerOmniMetrics } from '../../register';

async function collect(record: (provider: MeterProvider) => void): Promise<ResourceMetrics> {
  const reader = new OmniPrometheusReader();
  const provider = new MeterProvider({ readers: [reader], resource: resourceFromAttributes({ 'service.name': 'svc' }) });
  record(provider);
  const { resourceMetrics } = await reader.collect();
  await provider.shutdown();
  return resourceMetrics;
}

/** Lines of one family block, HELP through its last sample. */
function block(text: string, name: string): string {
  const lines = text.split('\n');
  const start = lines.indexOf(lines.find((l) => l.startsWith(`# HELP ${name} `)) ?? '');
  assert.ok(start >= 0, `family ${name} present`);
  let end = start + 2;
  while (end < lines.length && lines[end] !== '' && !lines[end]?.startsWith('# HELP')) end++;
  return lines.slice(start, end).join('\n');
}

describe('Prometheus serializer: golden text from a populated registry', () => {
  it('prints a counter, a gauge, a histogram and an info family exactly as vLLM does', async () => {
    const handle = await registerOmniMetrics({
      modelName: 'Qwen/Qwen3-Omni',
      stagePools: [1, 2],
      logStats: true,
      prometheus: false,
      logIntervalSeconds: 0,
      processMetrics: false,
      cacheConfig: { block_size: 16, enable_prefix_caching: true, num_gpu_blocks: null, gpu_memory_utilization: 0.9 },
      selfCheck: false,
    });
    handle.pipeline.requestSucceeded(0.42, 'stop');
    handle.pipeline.requestSucceeded(3.5, 'length');
    handle.pipeline.requestFailed();
    handle.pipeline.setRunning(4);
    handle.transfer.observeTxTime(0, 0, 1, 1, 0.0123);
    const text = await handle.metricsText();
    await handle.shutdown();

    assert.equal(
      block(text, 'vllm:omni_requests_success_total'),
      [
        '# HELP vllm:omni_requests_success_total Total requests by completion reason (stop / length / abort / ...). Aborts cover client-disconnect / cancellation paths in addition to upstream FinishReason.ABORT.',
        '# TYPE vllm:omni_requests_success_total counter',
        'vllm:omni_requests_success_total{finished_reason="stop",model_name="Qwen/Qwen3-Omni"} 1.0',
        'vllm:omni_requests_success_total{finished_reason="length",model_name="Qwen/Qwen3-Omni"} 1.0',
        'vllm:omni_requests_success_total{finished_reason="abort",model_name="Qwen/Qwen3-Omni"} 1.0',
      ].join('\n'),
    );
    assert.equal(
      block(text, 'vllm:omni_num_requests_running'),
      [
        '# HELP vllm:omni_num_requests_running Number of requests currently running across all pipeline stages.',
        '# TYPE vllm:omni_num_requests_running gauge',
        'vllm:omni_num_requests_running{model_name="Qwen/Qwen3-Omni"} 4.0',
      ].join('\n'),
    );
    assert.equal(
      block(text, 'vllm:omni_transfer_tx_s'),
      [
        '# HELP vllm:omni_transfer_tx_s Sender-side time in seconds (serialize + submit to connector).',
        '# TYPE vllm:omni_transfer_tx_s histogram',
        ...[
          ['0.001', 0],
          ['0.005', 0],
          ['0.01', 0],
          ['0.025', 1],
          ['0.05', 1],
          ['0.1', 1],
          ['0.25', 1],
          ['0.5', 1],
          ['1.0', 1],
          ['2.5', 1],
          ['5.0', 1],
          ['10.0', 1],
          ['60.0', 1],
          ['+Inf', 1],
        ].map(
          ([le, count]) =>
            `vllm:omni_transfer_tx_s_bucket{from_replica="0",from_stage="0",le="${le}",model_name="Qwen/Qwen3-Omni",to_replica="1",to_stage="1"} ${count}.0`,
        ),
        'vllm:omni_transfer_tx_s_count{from_replica="0",from_stage="0",model_name="Qwen/Qwen3-Omni",to_replica="1",to_stage="1"} 1.0',
        'vllm:omni_transfer_tx_s_sum{from_replica="0",from_stage="0",model_name="Qwen/Qwen3-Omni",to_replica="1",to_stage="1"} 0.0123',
      ].join('\n'),
    );
    assert.equal(
      block(text, 'vllm:cache_config_info'),
      [
        '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
        '# TYPE vllm:cache_config_info gauge',
        'vllm:cache_config_info{block_size="16",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_gpu_blocks="None",replica="0",stage="0"} 1.0',
        'vllm:cache_config_info{block_size="16",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_gpu_blocks="None",replica="0",stage="1"} 1.0',
        'vllm:cache_config_info{block_size="16",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_gpu_blocks="None",replica="1",stage="1"} 1.0',
      ].join('\n'),
    );
  });

  it('announces families without series, and prints eager series as zeros until recorded', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, processMetrics: false, selfCheck: false });
    const text = await handle.metricsText();
    await handle.shutdown();
    assert.equal(
      block(text, 'vllm:omni_num_requests_waiting'),
      '# HELP vllm:omni_num_requests_waiting Number of requests waiting to be scheduled.\n# TYPE vllm:omni_num_requests_waiting gauge\nvllm:omni_num_requests_waiting{model_name="m"} 0.0',
    );
    assert.equal(
      block(text, 'vllm:omni_audio_rtf'),
      '# HELP vllm:omni_audio_rtf Audio real-time factor (stage_gen_time_s / audio_duration_s); streaming TTS requires < 1.\n# TYPE vllm:omni_audio_rtf histogram',
    );
    const e2e = block(text, 'vllm:omni_e2e_request_latency_s').split('\n');
    assert.equal(e2e.length, 2 + 13 + 1 + 2);
    assert.equal(e2e[2], 'vllm:omni_e2e_request_latency_s_bucket{le="0.05",model_name="m"} 0.0');
    assert.equal(e2e.at(-1), 'vllm:omni_e2e_request_latency_s_sum{model_name="m"} 0.0');
    assert.ok(!text.includes('vllm:num_requests_running'), 'upstream families absent with logStats off');
    // 42 families, and the `_created` gauge families of the eager histograms and counters (e2e, prompt
    // and generation tokens, request queue wait, inference steps, image pixels, image count, realtime
    // VAD inference latency and endpoint delay).
    assert.equal(text.split('\n').filter((l) => l.startsWith('# HELP')).length, 42 + 9);
    assert.match(
      text,
      /\n# HELP vllm:omni_e2e_request_latency_s_created Pipeline-global end-to-end request latency in seconds \(user arrival to complete response\)\.\n# TYPE vllm:omni_e2e_request_latency_s_created gauge\nvllm:omni_e2e_request_latency_s_created\{model_name="m"\} 1\.\d+e\+09\n/,
    );
  });

  it('sorts labels, escapes HELP and label values, repairs invalid names, and merges scopes', async () => {
    const rm = await collect((provider) => {
      provider.getMeter('a').createCounter('app.requests', { description: 'Line one\nback\\slash' }).add(2, { zeta: 'a"b', alpha: 'x\ny', 'http.route': '/' });
      provider.getMeter('b').createCounter('app.requests', { description: 'Line one\nback\\slash' }).add(3, { zeta: 'z' });
    });
    assert.equal(
      serializePrometheus(rm, []),
      [
        '# HELP app_requests_total Line one\\nback\\\\slash',
        '# TYPE app_requests_total counter',
        'app_requests_total{alpha="x\\ny",http_route="/",zeta="a\\"b"} 2.0',
        'app_requests_total{zeta="z"} 3.0',
        '',
      ].join('\n'),
    );
  });

  it('speaks OpenMetrics 1.0 when asked: counter family without _total, samples with it, # EOF', async () => {
    const rm = await collect((provider) => provider.getMeter('a').createCounter('jobs_total', { description: 'Jobs "done".' }).add(1));
    assert.equal(serializePrometheus(rm, [], { format: 'openmetrics' }), '# HELP jobs Jobs \\"done\\".\n# TYPE jobs counter\njobs_total 1.0\n# EOF\n');
  });

  it('adds target_info and scope labels only when asked', async () => {
    const rm = await collect((provider) => provider.getMeter('scope-x', '1.2.3').createGauge('g', { description: 'G.' }).record(5));
    const text = serializePrometheus(rm, [], { withTargetInfo: true, withScopeLabels: true });
    assert.match(text, /^# HELP target_info Target metadata\n# TYPE target_info gauge\ntarget_info\{[^}]*service_name="svc"[^}]*\} 1\.0\n/);
    assert.match(text, /\ng\{otel_scope_name="scope-x",otel_scope_version="1\.2\.3"\} 5\.0\n/);
    assert.ok(!serializePrometheus(rm, []).includes('target_info'));
    assert.ok(!serializePrometheus(rm, []).includes('otel_scope'));
  });

  it('never prints a family twice when a catalog name is also collected under another type', async () => {
    const rm = await collect((provider) => provider.getMeter('x').createGauge('vllm:thing', { description: 'other' }).record(1));
    const text = await expectPrinted(
      ['omni-otel-metrics: vllm:thing was collected as a gauge but is declared a histogram; the gauge is left out of /metrics'],
      () => serializePrometheus(rm, [{ name: 'vllm:thing', type: 'histogram', help: 'declared' }]),
    );
    assert.equal(text, '# HELP vllm:thing declared\n# TYPE vllm:thing histogram\n');
  });
});
