import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, metrics, propagation, trace, TraceFlags } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { serveClusterWorker } from '../exporters/cluster/cluster-worker';
import { mergeSnapshots } from '../exporters/cluster/merge';
import { EMPTY_SNAPSHOT } from '../exporters/snapshot';
import { aggregateFamilies } from '../exporters/cluster/cluster-primary';
import { familiesSnapshot } from '../exporters/exposition/snapshot-families';
import { writeText } from '../exporters/exposition/text-writer';
import { writeProtobuf } from '../exporters/exposition/protobuf-writer';
import { LogMetricExporter, type LogLineStream } from '../exporters/log-exporter/log-metric-exporter';
import { OTLP_PROTOCOLS } from '../exporters/otlp/types';
import type { OmniMetricsOptions } from '../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../register';
import { declaredFamilies } from '../views/declared-families';
import { OmniOptionError } from '../views/common/option-checks';
import { OmniMetricProducer } from '../views/store/metric-producer';
import { EngineServer, fixtureText } from './engine-pull/support/engine-server';
import { startOtlpReceiver } from './otlp/support/otlp-receiver';
import { captureConsole } from './support/console-capture';
import { viewOfLogLines, viewOfMetricData, viewOfOtlp, viewOfProtobuf, viewOfText, type FeatureView } from './support/feature-views';
import { withoutIpcChannel } from './support/ipc-channel';
import { httpGet } from './support/http';

/**
 * Every deployment mode × reader × feature the package supports, run with one scenario and read
 * back exactly; each cell is what the reader received, and the table in docs/feature-matrix.md
 * must say the same. A cell is `yes` (the exact data), `classic buckets` / `not in the format` (the
 * format has no native buckets / no exemplars: the classic buckets are there), `…, warned` (the
 * format could carry it, this setup cannot, and a startup warning says so), or `refused` (an
 * option error names the combination and the way out).
 */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const FEATURES = ['exemplars', 'native histograms', 'tenant labels', 'realtime VAD', 'goodput'] as const;
type Feature = (typeof FEATURES)[number];

const BASE: OmniMetricsOptions = {
  modelName: 'm',
  logStats: true,
  logIntervalSeconds: 0,
  processMetrics: false,
  selfCheck: false,
  exemplars: true,
  nativeHistograms: { families: ['vllm:omni_request_queue_wait_s'] },
  requestLabels: [{ name: 'tenant', header: 'x-tenant', values: ['alpha'] }],
  slo: { e2eSeconds: 1, tpotSeconds: 0.1 },
};

/** The scenario, one event at a time (a cluster spreads them over its workers). */
const EVENTS: ReadonlyArray<(handle: OmniMetricsHandle) => void> = [
  (handle) => {
    // One request recorded within its trace: its e2e latency, its queue wait (the native-histogram family) and its success keep exemplars.
    const previous = handle.store.exemplarScope?.enter({ traceId: TRACE_ID, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
    try {
      handle.requestLabelled?.requestSucceeded(['alpha'], 0.5, 'stop');
      handle.requestLabelled?.observeQueueWait(['alpha'], 0.5);
    } finally {
      handle.store.exemplarScope?.leave(previous);
    }
  },
  (handle) => handle.requestLabelled?.requestSucceeded(['alpha'], 1.5, 'stop'),
  (handle) => handle.requestLabelled?.requestSucceeded(['other'], 3, 'length'),
  (handle) => handle.requestLabelled?.observeQueueWait(['alpha'], 1),
  (handle) => handle.requestLabelled?.observeQueueWait(['other'], 1.5),
  (handle) => handle.realtimeVad.observeInference(250),
  (handle) => handle.realtimeVad.observeInference(500),
  // Goodput against e2e ≤ 1 s and tpot ≤ 0.1 s: one good request, one slow over all, one slow per token, one aborted (judged on nothing).
  (handle) => handle.slo?.requestFinished(['alpha'], 'stop', { firstOutputSeconds: 0.1, e2eSeconds: 0.5, outputTokens: 5 }),
  (handle) => handle.slo?.requestFinished(['alpha'], 'stop', { firstOutputSeconds: 0.1, e2eSeconds: 1.5, outputTokens: 50 }),
  (handle) => handle.slo?.requestFinished(['other'], 'length', { firstOutputSeconds: 0.1, e2eSeconds: 0.9, outputTokens: 5 }),
  (handle) => handle.slo?.requestFinished(['other'], 'abort', { firstOutputSeconds: 5, e2eSeconds: 9, outputTokens: 2 }),
];

function record(handle: OmniMetricsHandle): void {
  for (const event of EVENTS) event(handle);
}

/** Everything the scenario recorded, as a reader that carries every feature receives it. */
const EXPECTED: FeatureView = {
  tenants: { alpha: 2, other: 1 },
  // Schema 3: 0.5 = 2^-1 in bucket -8, 1 in bucket 0, 1.5 in bucket 5 (Prometheus's numbering).
  queueWait: { count: 3, native: { schema: 3, buckets: { '-8': 1, '0': 1, '5': 1 } } },
  exemplars: { 'vllm:omni_e2e_request_latency_s': [TRACE_ID], 'vllm:omni_request_queue_wait_s': [TRACE_ID], 'vllm:omni_requests_success_total': [TRACE_ID] },
  vad: { count: 2, sum: 0.75 },
  goodput: { 'good alpha': 1, 'missed e2e alpha': 1, 'missed tpot other': 1 },
};

/** Which formats could carry native buckets and exemplars at all. */
interface Format {
  readonly native: boolean;
  readonly exemplars: boolean;
}
const TEXT: Format = { native: false, exemplars: false };
const OPENMETRICS: Format = { native: false, exemplars: true };
const FULL: Format = { native: true, exemplars: true };

interface Reading {
  readonly reader: string;
  readonly format: Format;
  /** Undefined: this reader is not offered in this mode (the text formats answer instead). */
  readonly view: FeatureView | undefined;
}

interface ModeResult {
  readonly readings: readonly Reading[];
  readonly warnings: readonly string[];
}

function outcome(feature: Feature, reading: Reading, warnings: readonly string[]): string {
  const { view, format } = reading;
  const warned = (word: string): string => (warnings.some((line) => line.includes(word)) ? 'warned' : 'SILENT');
  if (view === undefined) return `not offered, ${warned('nativeHistograms')}`;
  switch (feature) {
    case 'tenant labels':
      return JSON.stringify(view.tenants) === JSON.stringify(EXPECTED.tenants) ? 'yes' : `LOST ${JSON.stringify(view.tenants)}`;
    case 'realtime VAD':
      return JSON.stringify(view.vad) === JSON.stringify(EXPECTED.vad) ? 'yes' : `LOST ${JSON.stringify(view.vad)}`;
    case 'goodput': {
      // Formats order series differently: compared as sorted entries.
      const sorted = (record: Readonly<Record<string, number>>) => JSON.stringify(Object.entries(record).sort());
      return sorted(view.goodput) === sorted(EXPECTED.goodput) ? 'yes' : `LOST ${JSON.stringify(view.goodput)}`;
    }
    case 'exemplars':
      if (JSON.stringify(view.exemplars) === JSON.stringify(EXPECTED.exemplars)) return 'yes';
      if (Object.keys(view.exemplars).length > 0) return `LOST ${JSON.stringify(view.exemplars)}`;
      return format.exemplars ? `none, ${warned('exemplars')}` : 'not in the format';
    case 'native histograms':
      if (JSON.stringify(view.queueWait) === JSON.stringify(EXPECTED.queueWait)) return 'yes';
      if (view.queueWait.count !== EXPECTED.queueWait.count || view.queueWait.native !== undefined) return `LOST ${JSON.stringify(view.queueWait)}`;
      return format.native ? `classic buckets, ${warned('nativeHistograms')}` : 'classic buckets';
  }
}

/** Runs `body` with the console captured, and gives back its result and the warnings printed. */
async function withWarnings<T>(body: () => Promise<T>): Promise<{ result: T; warnings: string[] }> {
  let result: T | undefined;
  const lines = await captureConsole(async () => {
    result = await body();
  });
  return { result: result as T, warnings: lines.filter((line) => line.method === 'warn').map((line) => line.text) };
}

async function readRegistered(handle: OmniMetricsHandle): Promise<Reading[]> {
  const protobuf = handle.prometheusReader?.protobufBytes();
  return [
    { reader: 'text', format: TEXT, view: viewOfText(await handle.metricsText('text')) },
    { reader: 'OpenMetrics', format: OPENMETRICS, view: viewOfText(await handle.metricsText('openmetrics')) },
    { reader: 'protobuf', format: FULL, view: protobuf === undefined ? undefined : viewOfProtobuf(await protobuf) },
  ];
}

class Lines implements LogLineStream {
  readonly chunks: string[] = [];
  write(chunk: string, callback: (error?: Error | null) => void): boolean {
    this.chunks.push(chunk);
    callback();
    return true;
  }
}

const MODES: Record<string, () => Promise<ModeResult>> = {
  'own provider': async () => {
    const log = new Lines();
    const producer = new OmniMetricProducer();
    const logReader = new PeriodicExportingMetricReader({
      exporter: new LogMetricExporter({ destination: log, hostname: 'h' }),
      exportIntervalMillis: 3_600_000,
      metricProducers: [producer],
    });
    const { result, warnings } = await withWarnings(async () => {
      const handle = await registerOmniMetrics({ ...BASE, prometheus: false, exporters: [], readers: [logReader], metricProducers: [producer] });
      try {
        record(handle);
        const readings = await readRegistered(handle);
        await handle.forceFlush();
        return [...readings, { reader: 'log lines', format: TEXT, view: viewOfLogLines(log.chunks.join('').split('\n')) }];
      } finally {
        await handle.shutdown();
      }
    });
    const otlp: Reading[] = [];
    const otlpWarnings: string[] = [];
    for (const protocol of OTLP_PROTOCOLS) {
      const receiver = await startOtlpReceiver(protocol);
      try {
        const run = await withWarnings(async () => {
          const handle = await registerOmniMetrics({ ...BASE, prometheus: false, exporters: ['otlp'], otlp: { protocol, endpoint: receiver.endpoint } });
          try {
            record(handle);
            await handle.forceFlush();
          } finally {
            await handle.shutdown();
          }
        });
        otlpWarnings.push(...run.warnings);
        otlp.push({ reader: `OTLP ${protocol}`, format: FULL, view: viewOfOtlp((await receiver.waitForRequests(1))[0]!.body) });
      } finally {
        await receiver.close();
      }
    }
    return { readings: [...result, ...otlp], warnings: [...warnings, ...otlpWarnings] };
  },

  "own provider, exposition 'text'": async () => {
    const { result, warnings } = await withWarnings(async () => {
      const handle = await registerOmniMetrics({ ...BASE, prometheus: { host: '127.0.0.1', port: 0, exposition: 'text' } });
      try {
        record(handle);
        // What a Prometheus with native histograms on asks for: protobuf first, then OpenMetrics.
        const response = await httpGet(handle.prometheusServer!.url, {
          accept:
            'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,text/plain;version=0.0.4;q=0.5',
        });
        assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
        return [{ reader: 'served /metrics (any Accept)', format: FULL, view: viewOfText(response.body) }];
      } finally {
        await handle.shutdown();
      }
    });
    return { readings: result, warnings };
  },

  "NodeSDK, meterProvider 'external'": async () => {
    const { result, warnings } = await withWarnings(async () => {
      const handle = await registerOmniMetrics({ ...BASE, prometheus: false, meterProvider: 'external' });
      const sdk = new NodeSDK({ metricReaders: [handle.prometheusReader!], views: [...handle.views], spanProcessors: [], autoDetectResources: false });
      sdk.start();
      try {
        record(handle);
        return await readRegistered(handle);
      } finally {
        await handle.shutdown();
        await sdk.shutdown();
        // NodeSDK registered process-wide globals; leave the process as the other modes expect it.
        metrics.disable();
        trace.disable();
        context.disable();
        propagation.disable();
      }
    });
    return { readings: result, warnings };
  },

  'any OpenTelemetry reader, through createMetricProducer()': async () => {
    const { result, warnings } = await withWarnings(async () => {
      const handle = await registerOmniMetrics({ ...BASE, prometheus: false, exporters: [] });
      const sdkPrometheus = new PrometheusExporter({ preventServerStart: true, metricProducers: [handle.createMetricProducer()] });
      const memory = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      const push = new PeriodicExportingMetricReader({
        exporter: memory,
        exportIntervalMillis: 3_600_000,
        metricProducers: [handle.createMetricProducer(memory.selectAggregationTemporality.bind(memory))],
      });
      const provider = new MeterProvider({ readers: [sdkPrometheus, push] });
      try {
        record(handle);
        const text = new PrometheusSerializer().serialize((await sdkPrometheus.collect()).resourceMetrics);
        await push.forceFlush();
        const pushed: MetricData[] = memory.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
        return [
          { reader: "the SDK's PrometheusExporter", format: TEXT, view: viewOfText(text, (name) => name.replace(':', '_')) },
          { reader: 'a push reader (OTLP, console)', format: FULL, view: viewOfMetricData(pushed) },
        ];
      } finally {
        await provider.shutdown();
        await handle.shutdown();
      }
    });
    return { readings: result, warnings };
  },

  'node:cluster primary': async () => {
    const { result, warnings } = await withWarnings(async () => {
      const workers = [await registerOmniMetrics({ ...BASE, prometheus: false }), await registerOmniMetrics({ ...BASE, prometheus: false })];
      try {
        EVENTS.forEach((event, i) => event(workers[i % 2]!));
        // What serveClusterWorker says at each worker's startup (its IPC channel is all this process lacks).
        for (const worker of workers)
          assert.throws(() => withoutIpcChannel(() => serveClusterWorker(worker)), /must run in a worker started by cluster\.fork\(\)/);
        // What the primary does with the workers' snapshots on a scrape.
        const snapshots = await Promise.all(workers.map(async (worker) => familiesSnapshot(await worker.prometheusReader!.expositionFamilies())));
        const merged = mergeSnapshots(EMPTY_SNAPSHOT, JSON.parse(JSON.stringify(snapshots)), () => 'sum');
        const families = aggregateFamilies(merged, declaredFamilies(workers[0]!.catalog, 'm'));
        return [
          { reader: 'text', format: TEXT, view: viewOfText(writeText(families, { format: 'text', createdSeries: true })) },
          { reader: 'OpenMetrics', format: OPENMETRICS, view: viewOfText(writeText(families, { format: 'openmetrics', createdSeries: true })) },
          { reader: 'protobuf', format: FULL, view: viewOfProtobuf(writeProtobuf(families, { createdSeries: true })) },
        ];
      } finally {
        await Promise.all(workers.map((worker) => worker.shutdown()));
      }
    });
    return { readings: result, warnings };
  },

  enginePull: async () => {
    const engine = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    try {
      const { result, warnings } = await withWarnings(async () => {
        const handle = await registerOmniMetrics({
          ...BASE,
          stagePools: [1, 2],
          prometheus: false,
          exporters: [],
          enginePull: { engines: [{ stage: 1, replica: 1, url: engine.url }], cacheMillis: 0, timeoutMillis: 500 },
        });
        try {
          record(handle);
          const readings = await readRegistered(handle);
          const pushed = await handle.createMetricProducer(() => AggregationTemporality.CUMULATIVE).collect();
          return [
            ...readings,
            { reader: 'a push reader (OTLP, console)', format: FULL, view: viewOfMetricData(pushed.resourceMetrics.scopeMetrics[0]!.metrics) },
          ];
        } finally {
          await handle.shutdown();
        }
      });
      return { readings: result, warnings };
    } finally {
      await engine.down();
    }
  },
};

/** Combinations refused at startup, each with the option the error names. */
const REFUSALS: ReadonlyArray<{ readonly combination: string; readonly option: string; readonly start: () => Promise<unknown> }> = [
  {
    combination: 'node:cluster worker × tenant labels bounded by maxValues',
    option: 'requestLabels[0].maxValues',
    start: async () => {
      const handle = await registerOmniMetrics({ ...BASE, prometheus: false, requestLabels: [{ name: 'tenant', header: 'x-tenant', maxValues: 2 }] });
      try {
        serveClusterWorker(handle);
      } finally {
        await handle.shutdown();
      }
    },
  },
  {
    combination: "NodeSDK, meterProvider 'external' × the package's OTLP exporter",
    option: 'exporters',
    start: () => registerOmniMetrics({ ...BASE, prometheus: false, meterProvider: 'external', exporters: ['otlp'] }),
  },
];

/** The table of docs/feature-matrix.md: mode → reader → feature → cell. */
function documentedMatrix(): Map<string, string[]> {
  const page = readFileSync(join(__dirname, '..', 'docs', 'feature-matrix.md'), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of page.split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim().replace(/`/g, ''));
    if (cells.length !== 2 + FEATURES.length || cells[0] === 'mode' || cells[0]?.startsWith('---')) continue;
    rows.set(`${cells[0]} / ${cells[1]}`, cells.slice(2));
  }
  return rows;
}

function documentedRefusals(): string[] {
  const page = readFileSync(join(__dirname, '..', 'docs', 'feature-matrix.md'), 'utf8');
  return page
    .split('\n')
    .filter((line) => line.startsWith('- refused: '))
    .map((line) =>
      line
        .slice('- refused: '.length)
        .replace(/`/g, '')
        .replace(/ \(.*$/, ''),
    );
}

describe('every mode × reader × feature: the data, or a word at startup, or a refusal', function () {
  this.timeout(60_000);

  it('each cell is what docs/feature-matrix.md says, read back exactly', async () => {
    const actual = new Map<string, string[]>();
    for (const [mode, run] of Object.entries(MODES)) {
      const { readings, warnings } = await run();
      for (const reading of readings)
        actual.set(
          `${mode} / ${reading.reader}`,
          FEATURES.map((feature) => outcome(feature, reading, warnings)),
        );
    }
    assert.deepEqual(Object.fromEntries(actual), Object.fromEntries(documentedMatrix()));
  });

  it('the refused combinations throw an OmniOptionError naming the option, as the docs list them', async () => {
    for (const refusal of REFUSALS) {
      await assert.rejects(refusal.start(), (error: unknown) => error instanceof OmniOptionError && error.option === refusal.option, refusal.combination);
    }
    assert.deepEqual(
      REFUSALS.map((refusal) => refusal.combination),
      documentedRefusals(),
    );
  });
});
