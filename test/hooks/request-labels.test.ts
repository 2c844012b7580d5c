import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';
import type { RequestLabelOptions } from '../../instrumentation/recorders/request-labels';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { histogramOf, parseSamples, sampleValue, seriesOf } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';

const BASE: OmniMetricsOptions = {
  modelName: 'm',
  stagePools: [1, 2],
  logStats: true,
  prometheus: false,
  exporters: [],
  logIntervalSeconds: 0,
  processMetrics: false,
  selfCheck: false,
};

/** The families the option labels, as the default prefix prints their samples. */
const LABELLED_SAMPLES = [
  'vllm:omni_requests_success_total',
  'vllm:omni_requests_failed_total',
  'vllm:omni_e2e_request_latency_s',
  'vllm:omni_audio_ttfp_s',
  'vllm:omni_request_queue_wait_s',
  'vllm:omni_prompt_tokens_total',
  'vllm:omni_generation_tokens_total',
];

function audioChunk(requestId: string): OmniRequestOutput {
  return {
    requestId,
    stageId: 1,
    replicaId: 1,
    finalOutputType: 'audio',
    finished: false,
    multimodalOutput: { audio: new Int16Array(2400), sample_rate: 24000 },
  };
}

function finished(requestId: string): OmniRequestOutput {
  return {
    requestId,
    stageId: 1,
    replicaId: 1,
    finalOutputType: 'audio',
    finished: true,
    finishReason: 'stop',
    stageMetrics: [
      { stageId: 0, numTokensIn: 7, numTokensOut: 5 },
      { stageId: 1, numTokensOut: 9 },
    ],
  };
}

/** A handle fed through its instrumentation's observer: `work` runs with the handle's observer. */
async function withHandle<T>(
  options: Partial<OmniMetricsOptions>,
  work: (inst: OmniInstrumentation, metrics: OmniMetricsHandle) => T | Promise<T>,
): Promise<T> {
  const metrics = await registerOmniMetrics({ ...BASE, ...options });
  // No host classes: the tests drive the observer; the channels stand for a host that publishes (and keep construction quiet).
  const inst = new OmniInstrumentation({ metrics, diagnosticsChannels: true });
  inst.enable();
  try {
    return await work(inst, metrics);
  } finally {
    inst.disable();
    await metrics.shutdown();
  }
}

/** One request served to its end: queue wait, first audio packet, success, tokens; or a disconnect. */
function serve(inst: OmniInstrumentation, request: { requestId: string; [key: string]: unknown }, ok = true): void {
  const observer = inst.observer;
  const token = observer.generateStarted(request.requestId, request);
  observer.stageSubmitted({ requestId: request.requestId, stageId: 0, replicaId: 0, arrivalTime: 0, promptTokenCount: 7 });
  observer.generateOutput(token, audioChunk(request.requestId));
  if (ok) observer.generateOutput(token, finished(request.requestId));
  observer.generateEnded(token, ok ? 'completed' : 'abandoned');
}

/** Runs `work` with a monotonic clock that advances 0.25 s per reading from a fixed origin: intervals and creation times repeat exactly. */
async function withSteppedClock<T>(work: () => Promise<T>): Promise<T> {
  const real = performance.now;
  let reading = 1000;
  performance.now = () => (reading += 250);
  try {
    return await work();
  } finally {
    performance.now = real;
  }
}

const WORKLOAD = [
  { requestId: 'a', user: 'acme', headers: { 'x-priority': 'high' } },
  { requestId: 'b', user: 'globex', headers: { 'x-priority': 'low' } },
  { requestId: 'c', user: 'acme', headers: { 'x-priority': 'low' } },
  { requestId: 'd', user: 'initech' },
  { requestId: 'e' },
];

async function workloadExposition(options: Partial<OmniMetricsOptions>): Promise<string> {
  return withSteppedClock(() =>
    withHandle(options, async (inst, metrics) => {
      WORKLOAD.forEach((request, i) => serve(inst, request, i !== 4));
      return metrics.metricsText();
    }),
  );
}

const TENANT: RequestLabelOptions = { name: 'tenant', from: (request) => request.user, values: ['acme', 'globex'] };
const PRIORITY: RequestLabelOptions = { name: 'priority', header: 'X-Priority', values: ['high', 'low'] };

describe('request labels (tenant, priority) on the request families', function () {
  this.timeout(30_000);

  it('off (unset, or undefined): the whole exposition is byte-identical to the one without the option', async () => {
    const without = await workloadExposition({});
    const unset = await workloadExposition({ requestLabels: undefined });
    assert.equal(unset, without);
    // The eager zero series of vLLM-Omni are there: the option did not turn them lazy.
    assert.equal(sampleValue(without, 'vllm:omni_prompt_tokens_total', { model_name: 'm' }), 28);
    assert.equal(sampleValue(without, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'abort' }), 1);
    for (const name of LABELLED_SAMPLES) {
      for (const labels of seriesOf(without, name)) assert.ok(!('tenant' in labels), `${name} has no tenant label when off`);
    }
  });

  it('on: each request family is split by tenant and priority, sums equal the unlabelled totals, and every other family is unchanged', async () => {
    const off = await workloadExposition({});
    const on = await workloadExposition({ requestLabels: [TENANT, PRIORITY] });
    const s = (name: string, labels: Record<string, string>) => sampleValue(on, name, { model_name: 'm', ...labels });
    assert.equal(s('vllm:omni_requests_success_total', { finished_reason: 'stop', tenant: 'acme', priority: 'high' }), 1);
    assert.equal(s('vllm:omni_requests_success_total', { finished_reason: 'stop', tenant: 'acme', priority: 'low' }), 1);
    assert.equal(s('vllm:omni_requests_success_total', { finished_reason: 'stop', tenant: 'globex', priority: 'low' }), 1);
    // Not on the allow-list, and missing: both are `other`.
    assert.equal(s('vllm:omni_requests_success_total', { finished_reason: 'stop', tenant: 'other', priority: 'other' }), 1);
    assert.equal(s('vllm:omni_requests_success_total', { finished_reason: 'abort', tenant: 'other', priority: 'other' }), 1);
    assert.equal(s('vllm:omni_requests_failed_total', { reason: 'client_disconnect', tenant: 'other', priority: 'other' }), 1);
    assert.equal(s('vllm:omni_prompt_tokens_total', { tenant: 'acme', priority: 'high' }), 7);
    assert.equal(s('vllm:omni_generation_tokens_total', { tenant: 'acme', priority: 'low' }), 14);
    assert.equal(s('vllm:omni_audio_ttfp_s_count', { stage: '1', replica: '1', tenant: 'globex', priority: 'low' }), 1);
    assert.equal(histogramOf(on, 'vllm:omni_request_queue_wait_s', { model_name: 'm', tenant: 'other', priority: 'other' })?.count, 1);
    // Lazily bound: no value's series exists before a request carries it, and no unlabelled series at all.
    assert.equal(seriesOf(on, 'vllm:omni_prompt_tokens_total').length, 4);
    assert.equal(sampleValue(on, 'vllm:omni_prompt_tokens_total', { model_name: 'm' }), undefined);
    for (const name of LABELLED_SAMPLES) {
      const total = (text: string) =>
        parseSamples(text)
          .filter((sample) => sample.name === name && (sample.labels.le ?? '+Inf') === '+Inf')
          .reduce((sum, sample) => sum + sample.value, 0);
      assert.equal(total(on), total(off), `${name}: the tenants add up to the unlabelled total`);
    }
    const unlabelled = (text: string) =>
      text
        .split('\n')
        .filter((line) => !LABELLED_SAMPLES.some((name) => line.startsWith(name) || line.startsWith(`${name.replace(/_total$/, '')}_created`)))
        // Creation times: the labelled families bind fewer series at start, so the stepped clock is read fewer times.
        .map((line) => line.replace(/^(\S+_created\{[^}]*\}) \S+$/, '$1 <time>'))
        .join('\n');
    assert.equal(unlabelled(on), unlabelled(off), 'every other line is byte-identical');
  });

  it('a flood of 100 000 distinct tenants stays within the allow-list, the first maxValues and other: exact series counts', async () => {
    await withHandle({ requestLabels: [{ name: 'tenant', from: (request) => request.tenant, values: ['acme'], maxValues: 50 }] }, async (inst, metrics) => {
      for (let i = 0; i < 100_000; i++) serve(inst, { requestId: `r${i}`, tenant: i % 10 === 0 ? 'acme' : `tenant-${i}` });
      const text = await metrics.metricsText();
      const tenants = seriesOf(text, 'vllm:omni_requests_success_total').map((labels) => labels.tenant);
      assert.equal(tenants.length, 52, 'acme, the first 50 others, and other');
      assert.deepEqual(tenants.slice(0, 3), ['acme', 'tenant-1', 'tenant-2']);
      assert.ok(tenants.includes('other'));
      assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop', tenant: 'acme' }), 10_000);
      assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop', tenant: 'tenant-1' }), 1);
      assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop', tenant: 'other' }), 100_000 - 10_000 - 50);
      assert.equal(seriesOf(text, 'vllm:omni_e2e_request_latency_s_count').length, 52);
      assert.equal(seriesOf(text, 'vllm:omni_audio_ttfp_s_count').length, 52);
      assert.ok(!text.includes('otel_metric_overflow'));
    });
  });

  it('two flooded labels whose combinations pass cardinalityLimit fold into the overflow series: exactly the cap plus one', async () => {
    const requestLabels: RequestLabelOptions[] = [
      { name: 'tenant', from: (request) => request.tenant, maxValues: 9 },
      { name: 'priority', from: (request) => request.priority, maxValues: 9 },
    ];
    await withHandle({ requestLabels, cardinalityLimit: 20 }, async (inst, metrics) => {
      await withWarnings(async () => {
        for (let i = 0; i < 100_000; i++) serve(inst, { requestId: `r${i}`, tenant: `t${i % 1000}`, priority: `p${i % 7}` });
      });
      const text = await metrics.metricsText();
      const success = seriesOf(text, 'vllm:omni_requests_success_total');
      assert.equal(success.length, 21, '20 label sets and the overflow series');
      assert.equal(success.filter((labels) => labels.otel_metric_overflow === 'true').length, 1);
      const total = parseSamples(text)
        .filter((sample) => sample.name === 'vllm:omni_requests_success_total')
        .reduce((sum, sample) => sum + sample.value, 0);
      assert.equal(total, 100_000, 'nothing lost: the overflow series holds the rest');
    });
  });

  it('a source that throws, or returns no text, counts the request under other without reaching the host', async () => {
    const from = (request: { readonly [key: string]: unknown }) => {
      if (request.boom) throw new Error('user bug');
      return request.tenant;
    };
    await withHandle({ requestLabels: [{ name: 'tenant', from, maxValues: 3 }] }, async (inst, metrics) => {
      serve(inst, { requestId: 'a', boom: true });
      serve(inst, { requestId: 'b', tenant: { toString: () => 'x' } });
      serve(inst, { requestId: 'c', tenant: 42 });
      serve(inst, { requestId: 'd', tenant: 'x'.repeat(129) });
      const text = await metrics.metricsText();
      assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop', tenant: 'other' }), 3);
      assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop', tenant: '42' }), 1);
    });
  });
});
