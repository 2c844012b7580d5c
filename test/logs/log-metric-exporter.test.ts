import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InstrumentType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { LogMetricExporter, type LogLineStream, type LogMetricExporterOptions } from '../../exporters/log-exporter/log-metric-exporter';
import { unitWord } from '../../exporters/log-exporter/units';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { OmniMetricProducer } from '../../views/store/metric-producer';
import { parseSamples } from '../support/exposition';

const HOST = 'host-a';
const TIMESTAMP = 1648663119;

/** Collects every chunk the exporter writes. */
class CaptureStream implements LogLineStream {
  readonly chunks: string[] = [];
  writableEnded = false;
  write(chunk: string, callback: (error?: Error | null) => void): boolean {
    this.chunks.push(chunk);
    callback();
    return true;
  }
  get lines(): string[] {
    return this.chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '');
  }
}

function register(options: Partial<OmniMetricsOptions> = {}): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({
    modelName: 'm',
    stagePools: [1, 2],
    logStats: true,
    prometheus: false,
    logIntervalSeconds: 0,
    processMetrics: false,
    selfCheck: false,
    ...options,
  });
}

/** The same data points with a fixed end time, so the golden lines carry a known timestamp. */
function atTime(resourceMetrics: ResourceMetrics, seconds: number): ResourceMetrics {
  return {
    resource: resourceMetrics.resource,
    scopeMetrics: resourceMetrics.scopeMetrics.map((scope) => ({
      scope: scope.scope,
      metrics: scope.metrics.map(
        (metric) => ({ ...metric, dataPoints: metric.dataPoints.map((point) => ({ ...point, endTime: [seconds, 987_000_000] })) }) as MetricData,
      ),
    })),
  };
}

function exportOnce(exporter: LogMetricExporter, metrics: ResourceMetrics): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(metrics, resolve));
}

/** Collects the handle's data (fixed timestamp), exports it once, returns the lines written. */
async function linesOf(handle: OmniMetricsHandle, options: LogMetricExporterOptions = {}): Promise<string[]> {
  const stream = new CaptureStream();
  const exporter = new LogMetricExporter({ hostname: HOST, destination: stream, ...options });
  const { resourceMetrics } = await (handle.prometheusReader as OmniPrometheusReader).collect();
  const result = await exportOnce(exporter, atTime(resourceMetrics, TIMESTAMP));
  assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
  return stream.lines;
}

function linesFor(lines: readonly string[], family: string): string[] {
  return lines.filter((line) => line.startsWith(`${family}.`) || line.startsWith(`${family}_`) || line.includes(`"name":"${family}`));
}

function record(handle: OmniMetricsHandle): void {
  handle.pipeline.requestSucceeded(0.5, 'stop');
  handle.pipeline.requestSucceeded(3.25, 'length');
  handle.pipeline.setRunning(3);
  handle.pipeline.setWaiting(1);
  handle.pipeline.observeTokens(10, 20);
  handle.transfer.observeSize(0, 0, 1, 1, 2048);
}

const SUFFIX = `|#hostname:${HOST},timestamp:${TIMESTAMP}`;

describe('LogMetricExporter', () => {
  it('writes one StatsD-like line per Prometheus sample, TorchServe style', async () => {
    const handle = await register({ cacheConfig: { block_size: 16, enable_prefix_caching: true } });
    record(handle);
    const lines = await linesOf(handle);
    await handle.shutdown();

    assert.deepEqual(linesFor(lines, 'vllm:omni_requests_success_total'), [
      `vllm:omni_requests_success_total.Requests:1|#finished_reason:stop,model_name:m${SUFFIX}`,
      `vllm:omni_requests_success_total.Requests:1|#finished_reason:length,model_name:m${SUFFIX}`,
    ]);
    assert.deepEqual(linesFor(lines, 'vllm:omni_num_requests_running'), [`vllm:omni_num_requests_running.Requests:3|#model_name:m${SUFFIX}`]);
    assert.deepEqual(linesFor(lines, 'vllm:omni_prompt_tokens_total'), [`vllm:omni_prompt_tokens_total.Tokens:10|#model_name:m${SUFFIX}`]);
    assert.deepEqual(linesFor(lines, 'vllm:omni_e2e_request_latency_s'), [
      ...[
        ['0.05', 0],
        ['0.1', 0],
        ['0.25', 0],
        ['0.5', 1],
        ['1.0', 1],
        ['2.0', 1],
        ['5.0', 2],
        ['10.0', 2],
        ['20.0', 2],
        ['30.0', 2],
        ['60.0', 2],
        ['120.0', 2],
        ['300.0', 2],
        ['+Inf', 2],
      ].map(([le, count]) => `vllm:omni_e2e_request_latency_s_bucket.Count:${count}|#le:${le},model_name:m${SUFFIX}`),
      `vllm:omni_e2e_request_latency_s_count.Count:2|#model_name:m${SUFFIX}`,
      `vllm:omni_e2e_request_latency_s_sum.Seconds:3.75|#model_name:m${SUFFIX}`,
    ]);
    const size = linesFor(lines, 'vllm:omni_transfer_size_bytes');
    assert.equal(size.at(-1), `vllm:omni_transfer_size_bytes_sum.Bytes:2048|#from_replica:0,from_stage:0,model_name:m,to_replica:1,to_stage:1${SUFFIX}`);
    assert.equal(size[0], `vllm:omni_transfer_size_bytes_bucket.Count:0|#from_replica:0,from_stage:0,le:1024.0,model_name:m,to_replica:1,to_stage:1${SUFFIX}`);
    assert.ok(
      size.includes(`vllm:omni_transfer_size_bytes_bucket.Count:1|#from_replica:0,from_stage:0,le:1.048576e+06,model_name:m,to_replica:1,to_stage:1${SUFFIX}`),
    );
    assert.deepEqual(linesFor(lines, 'vllm:cache_config_info'), [
      `vllm:cache_config_info.Count:1|#block_size:16,enable_prefix_caching:True,replica:0,stage:0${SUFFIX}`,
      `vllm:cache_config_info.Count:1|#block_size:16,enable_prefix_caching:True,replica:0,stage:1${SUFFIX}`,
      `vllm:cache_config_info.Count:1|#block_size:16,enable_prefix_caching:True,replica:1,stage:1${SUFFIX}`,
    ]);
  });

  it('logs exactly the samples /metrics serves: same names, labels and values', async () => {
    const handle = await register({ cacheConfig: { block_size: 16 } });
    record(handle);
    handle.statLogger?.recordSleepState(false, 0);
    const text = await handle.metricsText();
    const lines = await linesOf(handle, { format: 'json' });
    await handle.shutdown();

    const key = (name: string, labels: Record<string, string>): string =>
      `${name}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))))}`;
    const fromLog = lines.map((line) => {
      const parsed = JSON.parse(line) as { name: string; value: number; labels: Record<string, string> };
      return `${key(parsed.name, parsed.labels)} ${parsed.value}`;
    });
    // `_created` samples are exposition metadata (when a series began), not values to log.
    const fromScrape = parseSamples(text)
      .filter((sample) => !sample.name.endsWith('_created'))
      .map((sample) => `${key(sample.name, sample.labels)} ${sample.value}`);
    assert.deepEqual(fromLog, fromScrape);
  });

  it('writes JSON lines with the same fields', async () => {
    const handle = await register();
    record(handle);
    const lines = await linesOf(handle, { format: 'json' });
    await handle.shutdown();

    assert.deepEqual(linesFor(lines, 'vllm:omni_requests_success_total'), [
      `{"name":"vllm:omni_requests_success_total","unit":"Requests","value":1,"labels":{"finished_reason":"stop","model_name":"m"},"hostname":"${HOST}","timestamp":${TIMESTAMP}}`,
      `{"name":"vllm:omni_requests_success_total","unit":"Requests","value":1,"labels":{"finished_reason":"length","model_name":"m"},"hostname":"${HOST}","timestamp":${TIMESTAMP}}`,
    ]);
    const e2e = linesFor(lines, 'vllm:omni_e2e_request_latency_s');
    assert.equal(
      e2e[3],
      `{"name":"vllm:omni_e2e_request_latency_s_bucket","unit":"Count","value":1,"labels":{"le":"0.5","model_name":"m"},"hostname":"${HOST}","timestamp":${TIMESTAMP}}`,
    );
    assert.equal(
      e2e.at(-1),
      `{"name":"vllm:omni_e2e_request_latency_s_sum","unit":"Seconds","value":3.75,"labels":{"model_name":"m"},"hostname":"${HOST}","timestamp":${TIMESTAMP}}`,
    );
  });

  it('uses the exposed names under the otel naming scheme too, with the descriptor units', async () => {
    const handle = await register({ naming: 'otel' });
    record(handle);
    const lines = await linesOf(handle);
    await handle.shutdown();

    assert.deepEqual(linesFor(lines, 'vllm:omni_requests_success_total'), [
      `vllm:omni_requests_success_total.Requests:1|#finished_reason:stop,model_name:m${SUFFIX}`,
      `vllm:omni_requests_success_total.Requests:1|#finished_reason:length,model_name:m${SUFFIX}`,
    ]);
    assert.equal(linesFor(lines, 'vllm:omni_e2e_request_latency_s').at(-1), `vllm:omni_e2e_request_latency_s_sum.Seconds:3.75|#model_name:m${SUFFIX}`);
  });

  it('prints instruments outside the catalog under their Prometheus name, escaping separators in values', async () => {
    const reader = new OmniPrometheusReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter('user');
    meter.createCounter('jobs.done', { unit: 'ms' }).add(2.5, { 'queue.name': 'a,b|c\nd\\e' });
    meter.createGauge('temperature').record(-Infinity);
    meter.createUpDownCounter('in_flight', { unit: '{job}' }).add(-2);
    const stream = new CaptureStream();
    const exporter = new LogMetricExporter({ hostname: 'h,1', destination: stream });
    const { resourceMetrics } = await reader.collect();
    await exportOnce(exporter, atTime(resourceMetrics, TIMESTAMP));
    const json = new CaptureStream();
    await exportOnce(new LogMetricExporter({ hostname: HOST, destination: json, format: 'json' }), atTime(resourceMetrics, TIMESTAMP));
    await provider.shutdown();

    assert.deepEqual(stream.lines, [
      `jobs_done_total.Milliseconds:2.5|#queue_name:a\\,b\\|c\\nd\\\\e|#hostname:h\\,1,timestamp:${TIMESTAMP}`,
      `temperature.Count:-Inf|#|#hostname:h\\,1,timestamp:${TIMESTAMP}`,
      `in_flight.Jobs:-2|#|#hostname:h\\,1,timestamp:${TIMESTAMP}`,
    ]);
    assert.equal(
      json.lines[0],
      `{"name":"jobs_done_total","unit":"Milliseconds","value":2.5,"labels":{"queue_name":"a,b|c\\nd\\\\e"},"hostname":"${HOST}","timestamp":${TIMESTAMP}}`,
    );
    assert.equal(json.lines[1], `{"name":"temperature","unit":"Count","value":"-Inf","labels":{},"hostname":"${HOST}","timestamp":${TIMESTAMP}}`);
  });

  it('maps units to TorchServe-style words', () => {
    assert.deepEqual(
      ['s', 'ms', 'us', 'By', 'MiBy', '{token}', '{request}', '{frame}', '{preemption}', '{process}', '', '1', '%', 'm/s', '{a b}'].map(unitWord),
      [
        'Seconds',
        'Milliseconds',
        'Microseconds',
        'Bytes',
        'Mebibytes',
        'Tokens',
        'Requests',
        'Frames',
        'Preemptions',
        'Process',
        'Count',
        'Ratio',
        'Percent',
        'm_s',
        'A_bs',
      ],
    );
  });

  it('is cumulative for every instrument kind', () => {
    const exporter = new LogMetricExporter({ destination: new CaptureStream() });
    for (const kind of Object.values(InstrumentType)) {
      assert.equal(exporter.selectAggregationTemporality(), AggregationTemporality.CUMULATIVE, kind);
    }
  });

  it('exports periodically through registerOmniMetrics readers: epoch-second timestamps, running totals', async () => {
    const stream = new CaptureStream();
    const exporter = new LogMetricExporter({ hostname: HOST, destination: stream });
    const producer = new OmniMetricProducer();
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, metricProducers: [producer] });
    const handle = await register({ readers: [reader], metricProducers: [producer] });
    const before = Math.floor(Date.now() / 1000);
    handle.pipeline.requestSucceeded(0.5, 'stop');
    await (handle.meterProvider as MeterProvider).forceFlush();
    handle.pipeline.requestSucceeded(0.5, 'stop');
    await (handle.meterProvider as MeterProvider).forceFlush();
    const after = Math.ceil(Date.now() / 1000);
    await handle.shutdown();

    const success = linesFor(stream.lines, 'vllm:omni_requests_success_total');
    assert.equal(success.length >= 2, true);
    const pattern = /^vllm:omni_requests_success_total\.Requests:(\d+)\|#finished_reason:stop,model_name:m\|#hostname:host-a,timestamp:(\d+)$/;
    const parsed = success.slice(0, 2).map((line) => pattern.exec(line));
    assert.deepEqual(
      parsed.map((match) => match?.[1]),
      ['1', '2'],
      'cumulative: the second export carries the running total',
    );
    for (const match of parsed) {
      const timestamp = Number(match?.[2]);
      assert.ok(timestamp >= before && timestamp <= after, `timestamp ${timestamp} in [${before}, ${after}]`);
    }
  });

  it("with native histograms on, the documented setup prints every histogram family's classic buckets", async () => {
    const stream = new CaptureStream();
    const exporter = new LogMetricExporter({ hostname: HOST, destination: stream });
    const producer = new OmniMetricProducer();
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, metricProducers: [producer] });
    const handle = await register({ readers: [reader], metricProducers: [producer], nativeHistograms: true });
    let lines: string[];
    try {
      for (const latency of [0.05, 0.5, 7]) handle.pipeline.requestSucceeded(latency, 'stop');
      await (handle.meterProvider as MeterProvider).forceFlush();
      lines = stream.lines;
    } finally {
      await handle.shutdown();
    }
    const e2e = linesFor(lines, 'vllm:omni_e2e_request_latency_s').map((line) => line.replace(/\|#hostname:.*$/, ''));
    const buckets: Array<[string, number]> = [
      ['0.05', 1],
      ['0.1', 1],
      ['0.25', 1],
      ['0.5', 2],
      ['1.0', 2],
      ['2.0', 2],
      ['5.0', 2],
      ['10.0', 3],
      ['20.0', 3],
      ['30.0', 3],
      ['60.0', 3],
      ['120.0', 3],
      ['300.0', 3],
      ['+Inf', 3],
    ];
    assert.deepEqual(e2e, [
      ...buckets.map(([le, count]) => `vllm:omni_e2e_request_latency_s_bucket.Count:${count}|#le:${le},model_name:m`),
      'vllm:omni_e2e_request_latency_s_count.Count:3|#model_name:m',
      'vllm:omni_e2e_request_latency_s_sum.Seconds:7.55|#model_name:m',
    ]);
  });

  describe('destinations', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'omni-log-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    async function collected(): Promise<{ metrics: ResourceMetrics; done: () => Promise<void> }> {
      const handle = await register();
      handle.pipeline.requestSucceeded(0.5, 'stop');
      const { resourceMetrics } = await (handle.prometheusReader as OmniPrometheusReader).collect();
      return { metrics: atTime(resourceMetrics, TIMESTAMP), done: () => handle.shutdown() };
    }

    it('appends to a file, creating it when missing', async () => {
      const { metrics, done } = await collected();
      const file = join(dir, 'metrics.log');
      const exporter = new LogMetricExporter({ hostname: HOST, destination: { file } });
      assert.equal((await exportOnce(exporter, metrics)).code, ExportResultCode.SUCCESS);
      assert.equal((await exportOnce(exporter, metrics)).code, ExportResultCode.SUCCESS);
      await exporter.forceFlush();
      await done();
      const lines = readFileSync(file, 'utf8').split('\n');
      assert.equal(lines.at(-1), '', 'ends with a newline');
      const success = lines.filter((line) => line.startsWith('vllm:omni_requests_success_total.'));
      assert.deepEqual(success, [
        `vllm:omni_requests_success_total.Requests:1|#finished_reason:stop,model_name:m${SUFFIX}`,
        `vllm:omni_requests_success_total.Requests:1|#finished_reason:stop,model_name:m${SUFFIX}`,
      ]);
    });

    it('reports write errors through the export callback, never by throwing', async () => {
      const { metrics, done } = await collected();
      const unwritable = new LogMetricExporter({ destination: { file: join(dir, 'missing-dir', 'metrics.log') } });
      const fileResult = await exportOnce(unwritable, metrics);
      assert.equal(fileResult.code, ExportResultCode.FAILED);
      assert.match(String(fileResult.error), /ENOENT/);

      const closed = new CaptureStream();
      closed.writableEnded = true;
      const streamResult = await exportOnce(new LogMetricExporter({ destination: closed }), metrics);
      assert.equal(streamResult.code, ExportResultCode.FAILED);
      assert.deepEqual(closed.chunks, []);

      const failing: LogLineStream = { write: (_chunk, callback) => (callback(new Error('EPIPE')), false) };
      const failed = await exportOnce(new LogMetricExporter({ destination: failing }), metrics);
      assert.equal(failed.code, ExportResultCode.FAILED);
      assert.equal(failed.error?.message, 'EPIPE');

      const stream = new CaptureStream();
      const exporter = new LogMetricExporter({ destination: stream });
      await exporter.shutdown();
      assert.equal((await exportOnce(exporter, metrics)).code, ExportResultCode.FAILED);
      assert.deepEqual(stream.chunks, [], 'nothing written after shutdown');
      await done();
    });

    it('rejects a bad format or destination at construction, as an OmniOptionError naming it', () => {
      const refused = (option: string, message: string) => ({ name: 'OmniOptionError', option, message: `omni-otel-metrics: ${message}` });
      const destinations = 'destination must be "stdout", "stderr", a writable stream or { file: path }';
      assert.throws(
        () => new LogMetricExporter({ format: 'xml' as 'json' }),
        refused('format', 'format must be one of "statsd", "json"; got the string "xml"'),
      );
      assert.throws(
        () => new LogMetricExporter({ format: 'JSON' as 'json' }),
        refused('format', 'format must be one of "statsd", "json"; got the string "JSON" (did you mean "json"?)'),
      );
      assert.throws(() => new LogMetricExporter({ destination: { file: '' } }), refused('destination', `${destinations}; got {"file":""}`));
      assert.throws(() => new LogMetricExporter({ destination: 'stdio' as 'stdout' }), refused('destination', `${destinations}; got the string "stdio"`));
    });
  });
});
