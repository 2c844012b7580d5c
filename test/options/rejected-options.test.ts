import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { startClusterPrimary } from '../../cluster-primary';
import { serveClusterWorker } from '../../exporters/cluster/cluster-worker';
import { LogMetricExporter } from '../../exporters/log-exporter/log-metric-exporter';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { resolveOmniSettings } from '../../settings';
import { OmniOptionError } from '../../views/common/option-checks';
import { OmniStatLogger } from '../../instrumentation/recorders/stat-logger';
import { resolveCatalog } from '../../views/catalog/catalog';
import { StageReplicaMap } from '../../views/stage-replica-map';
import { OmniMetricProducer } from '../../views/store/metric-producer';
import { SeriesStore } from '../../views/store/series-store';
import { createSpecDecodingStats, missedObjectives, StatsThrottle, type RequestTimings } from '../../index';
import { freePort } from '../support/ports';
import { expectPrinted } from '../support/console-capture';
import { activeResources, assertResourcesBackTo } from '../support/resources';

const ACCEPTED =
  'modelName, stagePools, stageNames, logStats, prefix, maxModelLen, features, showHiddenMetrics, showHiddenMetricsForVersion, customHistogramBuckets, configFile, cacheConfig, prometheus, exporters, otlp, serviceName, genAiMetrics, naming, resource, readers, metricProducers, cardinalityLimit, requestLabels, slo, enginePull, meterProvider, prometheusReader, logIntervalSeconds, logSink, selfCheck, processMetrics, nativeHistograms, exemplars';

/** Options that would start a server, a log timer, push readers and the self-check if they got through. */
const TIMINGS: RequestTimings = { firstOutputSeconds: 0.2, e2eSeconds: 0.9, outputTokens: 10 };

const STARTING: OmniMetricsOptions = {
  modelName: 'm',
  stagePools: [1, 2],
  logStats: true,
  logIntervalSeconds: 5,
  prometheus: { host: '127.0.0.1', port: 0 },
  exporters: ['prometheus', 'otlp'],
  otlp: { endpoint: 'http://127.0.0.1:9/v1/metrics' },
};

/** Rejected options: what is passed over `STARTING`, the option named, and the exact message. */
const REJECTED: ReadonlyArray<{ readonly given: Record<string, unknown>; readonly option: string; readonly message: string }> = [
  { given: { logstats: true }, option: 'logstats', message: `unknown option "logstats" (did you mean "logStats"?); options accepts ${ACCEPTED}` },
  { given: { promethues: {} }, option: 'promethues', message: `unknown option "promethues" (did you mean "prometheus"?); options accepts ${ACCEPTED}` },
  { given: { metricsPort: 9464 }, option: 'metricsPort', message: `unknown option "metricsPort"; options accepts ${ACCEPTED}` },
  { given: { modelName: '' }, option: 'modelName', message: `modelName must be a non-empty string (vLLM's served model name); got the string ""` },
  { given: { stagePools: 3 }, option: 'stagePools', message: 'stagePools must be an array; got 3' },
  { given: { logStats: 'yes' }, option: 'logStats', message: 'logStats must be true or false; got the string "yes"' },
  { given: { processMetrics: 1 }, option: 'processMetrics', message: 'processMetrics must be true or false; got 1' },
  { given: { prometheus: true }, option: 'prometheus', message: 'prometheus must be false or an object of server options ({} for the defaults); got true' },
  { given: { naming: 'prom' }, option: 'naming', message: 'naming must be one of "vllm", "otel"; got the string "prom"' },
  { given: { prefix: 'omni_' }, option: 'prefix', message: 'prefix must be one of "vllm:omni_", "vllm_omni:"; got the string "omni_"' },
  { given: { maxModelLen: 0 }, option: 'maxModelLen', message: 'maxModelLen must be a positive integer; got 0' },
  { given: { cardinalityLimit: 1.5 }, option: 'cardinalityLimit', message: 'cardinalityLimit must be a positive integer; got 1.5' },
  { given: { logIntervalSeconds: -1 }, option: 'logIntervalSeconds', message: 'logIntervalSeconds must be a finite number ≥ 0; got -1' },
  { given: { configFile: '' }, option: 'configFile', message: 'configFile must be a non-empty string; got the string ""' },
  { given: { logSink: {} }, option: 'logSink', message: 'logSink must be an object with info(); got {}' },
  { given: { metricProducers: [{}] }, option: 'metricProducers[0]', message: 'metricProducers[0] must be an OmniMetricProducer; got {}' },
  {
    given: { slo: { e2eSecond: 5 } },
    option: 'slo.e2eSecond',
    message: 'unknown option "slo.e2eSecond" (did you mean "e2eSeconds"?); slo accepts firstOutputSeconds, e2eSeconds, tpotSeconds, audioTtfpSeconds, audioRtf',
  },
  {
    given: { slo: { ttft: 0.5 } },
    option: 'slo.ttft',
    message: 'unknown option "slo.ttft"; slo accepts firstOutputSeconds, e2eSeconds, tpotSeconds, audioTtfpSeconds, audioRtf',
  },
  { given: { slo: { e2eSeconds: 0 } }, option: 'slo.e2eSeconds', message: 'slo.e2eSeconds must be a finite number > 0; got 0' },
  { given: { slo: { tpotSeconds: -0.05 } }, option: 'slo.tpotSeconds', message: 'slo.tpotSeconds must be a finite number > 0; got -0.05' },
  { given: { slo: { audioRtf: Infinity } }, option: 'slo.audioRtf', message: 'slo.audioRtf must be a finite number > 0; got Infinity' },
  { given: { slo: { audioTtfpSeconds: NaN } }, option: 'slo.audioTtfpSeconds', message: 'slo.audioTtfpSeconds must be a finite number > 0; got NaN' },
  {
    given: { slo: { firstOutputSeconds: '0.5' } },
    option: 'slo.firstOutputSeconds',
    message: 'slo.firstOutputSeconds must be a finite number > 0; got the string "0.5"',
  },
  { given: { slo: 5 }, option: 'slo', message: 'slo must be an object; got 5' },
  { given: { slo: [1] }, option: 'slo', message: 'slo must be an object; got [1]' },
  {
    given: { slo: {} },
    option: 'slo',
    message: 'slo declares no objective: give at least one of firstOutputSeconds, e2eSeconds, tpotSeconds, audioTtfpSeconds, audioRtf, or leave slo out',
  },
  {
    given: { genAiMetrics: true, logStats: false },
    option: 'genAiMetrics',
    message: 'genAiMetrics needs logStats: true (the GenAI histograms are derived from the upstream stats)',
  },
  {
    given: { features: { specdecode: { numSpeculativeTokens: 2 } } },
    option: 'features.specdecode',
    message:
      'unknown option "features.specdecode" (did you mean "specDecode"?); features accepts specDecode, kvConnector, lora, kvCacheMetrics, corruptedRequests',
  },
  {
    given: { features: { kvConnector: 'lmcache' } },
    option: 'features.kvConnector',
    message: 'features.kvConnector must be one of "nixl", "offloading", "simple-cpu-offload"; got the string "lmcache"',
  },
  {
    given: { features: { kvCacheMetrics: 'on' } },
    option: 'features.kvCacheMetrics',
    message: 'features.kvCacheMetrics must be true or false; got the string "on"',
  },
  {
    given: { features: { specDecode: { numSpeculativeTokens: 0 } } },
    option: 'features.specDecode.numSpeculativeTokens',
    message: 'features.specDecode.numSpeculativeTokens must be a positive integer; got 0',
  },
  { given: { features: { lora: {} } }, option: 'features.lora.maxLoras', message: 'features.lora.maxLoras must be a positive integer; got undefined' },
  {
    given: { prometheus: { host: '127.0.0.1', port: 0, withTargetinfo: true } },
    option: 'prometheus.withTargetinfo',
    message:
      'unknown option "prometheus.withTargetinfo" (did you mean "withTargetInfo"?); prometheus accepts host, port, path, auth, tls, headersTimeoutMillis, idleTimeoutMillis, writeTimeoutMillis, maxConnections, withTargetInfo, withScopeLabels, createdSeries, exposition',
  },
  {
    given: { prometheus: { createdSeries: 'no' } },
    option: 'prometheus.createdSeries',
    message: 'prometheus.createdSeries must be true or false; got the string "no"',
  },
  {
    given: { prometheus: { exposition: 'openmetrics' } },
    option: 'prometheus.exposition',
    message: 'prometheus.exposition must be one of "negotiate", "text"; got the string "openmetrics"',
  },
  { given: { exemplars: 'auto' }, option: 'exemplars', message: 'exemplars must be true or false; got the string "auto"' },
  { given: { prometheus: { host: '' } }, option: 'prometheus.host', message: 'prometheus.host must be a non-empty string; got the string ""' },
  {
    given: { prometheus: { tls: { key: 'k.pem', cert: 'c.pem' } } },
    option: 'prometheus.tls.key',
    message: 'unknown option "prometheus.tls.key"; prometheus.tls accepts keyFile, certFile',
  },
  {
    given: { prometheus: { auth: { token: 'secret' } } },
    option: 'prometheus.auth.token',
    message: 'unknown option "prometheus.auth.token"; prometheus.auth accepts bearerToken, basic',
  },
  {
    given: { otlp: { endpiont: 'http://127.0.0.1:4318/v1/metrics' } },
    option: 'otlp.endpiont',
    message:
      'unknown option "otlp.endpiont" (did you mean "endpoint"?); otlp accepts protocol, endpoint, headers, timeoutMillis, compression, exportIntervalMillis, exportTimeoutMillis, temporality',
  },
  {
    given: { selfCheck: { interval: 5 } },
    option: 'selfCheck.interval',
    message: 'unknown option "selfCheck.interval" (did you mean "intervalSeconds"?); selfCheck accepts intervalSeconds',
  },
  {
    given: { enginePull: { engines: [{ stage: 0, replica: 0, url: 'http://127.0.0.1:8000/metrics' }], timeout: 100 } },
    option: 'enginePull.timeout',
    message:
      'unknown option "enginePull.timeout" (did you mean "timeoutMillis"?); enginePull accepts engines, timeoutMillis, cacheMillis, intervalMillis, passThrough, maxResponseBytes',
  },
  {
    given: { enginePull: { engines: [{ stage: 0, replica: 0, uri: 'http://127.0.0.1:8000/metrics' }] } },
    option: 'enginePull.engines[0].uri',
    message: 'unknown option "enginePull.engines[0].uri" (did you mean "url"?); enginePull.engines[0] accepts stage, replica, url, engine',
  },
  { given: { meterProvider: {} }, option: 'meterProvider', message: 'meterProvider must be an object with getMeter(); got {}' },
  { given: { stagePools: [1, 0] }, option: 'stagePools', message: 'stagePools[1] must be a positive integer replica count; got 0' },
  { given: { prometheus: { port: 70000 } }, option: 'prometheus', message: 'prometheus.port must be an integer from 0 to 65535; got 70000' },
  {
    given: { prometheus: { host: '127.0.0.1', port: 0, path: 'metrics' } },
    option: 'prometheus',
    message: 'prometheus.path must start with \'/\'; got the string "metrics"',
  },
  {
    given: { cacheConfig: { 'bad key': 1 } },
    option: 'cacheConfig',
    message: 'cacheConfig key "bad key" is not usable as a label name (want [a-zA-Z_][a-zA-Z0-9_]*, not __-prefixed, not stage / replica / le)',
  },
  {
    given: { exporters: ['prom'] },
    option: 'exporters',
    message: 'exporters must list only prometheus, otlp, console, none; got ["prom"] (did you mean "prometheus"?)',
  },
  {
    given: { exporters: ['prometheus', 'otpl'] },
    option: 'exporters',
    message: 'exporters must list only prometheus, otlp, console, none; got ["prometheus","otpl"] (did you mean "otlp"?)',
  },
  { given: { prometheus: { port: '9464' } }, option: 'prometheus', message: 'prometheus.port must be an integer from 0 to 65535; got the string "9464"' },
  {
    given: { stagePools: [1, 2, 1], stageNames: ['thinker', 'talker'] },
    option: 'stageNames',
    message: 'stageNames names 2 stage(s) but stagePools has 3: give every stage a name, in stage order (stage 2 has none)',
  },
  { given: { naming: 'Otel' }, option: 'naming', message: 'naming must be one of "vllm", "otel"; got the string "Otel" (did you mean "otel"?)' },
  { given: { otlp: { protocol: 'http' } }, option: 'otlp', message: 'otlp.protocol must be one of http/protobuf, http/json, grpc; got the string "http"' },
  { given: { serviceName: '' }, option: 'serviceName', message: 'serviceName must be a non-empty string' },
  { given: { selfCheck: { intervalSeconds: 0 } }, option: 'selfCheck', message: 'selfCheck.intervalSeconds must be a finite number > 0; got 0' },
  {
    given: { enginePull: { engines: [{ stage: 5, replica: 0, url: 'http://127.0.0.1:8000/metrics' }] } },
    option: 'enginePull',
    message: 'enginePull.engines[0].stage must be one of the 2 stages of stagePools (0..1); got 5',
  },
  {
    given: { prometheusReader: new OmniPrometheusReader() },
    option: 'prometheusReader',
    message: "prometheusReader is for a meterProvider of your own (or meterProvider: 'external'); without one, this call builds its reader",
  },
  {
    given: { meterProvider: 'external', readers: [] },
    option: 'readers',
    message: 'readers are attached to the provider this call creates; with meterProvider given, add them to that provider',
  },
  {
    given: { meterProvider: 'external', serviceName: 'svc' },
    option: 'serviceName',
    message: 'serviceName shapes the provider this call creates; with meterProvider given, set it on that provider',
  },
  {
    given: { meterProvider: 'external' },
    option: 'exporters',
    message:
      'exporters otlp and console need the provider registerOmniMetrics creates; with a meterProvider of your own, give its push reader metricProducers: [handle.createMetricProducer()]',
  },
  { given: { nativeHistograms: 'on' }, option: 'nativeHistograms', message: 'nativeHistograms must be a boolean or an object of options; got the string "on"' },
  {
    given: { nativeHistograms: { scheme: 3 } },
    option: 'nativeHistograms.scheme',
    message: 'unknown option "nativeHistograms.scheme" (did you mean "schema"?); nativeHistograms accepts families, schema, maxBuckets, zeroThreshold',
  },
  { given: { nativeHistograms: { schema: 9 } }, option: 'nativeHistograms.schema', message: 'nativeHistograms.schema must be an integer from -4 to 8; got 9' },
  {
    given: { nativeHistograms: { maxBuckets: 1 } },
    option: 'nativeHistograms.maxBuckets',
    message: 'nativeHistograms.maxBuckets must be an integer from 2 to 65536; got 1',
  },
  {
    given: { nativeHistograms: { zeroThreshold: -1 } },
    option: 'nativeHistograms.zeroThreshold',
    message: 'nativeHistograms.zeroThreshold must be a finite number >= 0; got -1',
  },
  {
    given: { nativeHistograms: { families: ['vllm:num_requests_running'] } },
    option: 'nativeHistograms.families[0]',
    message: 'nativeHistograms.families[0] must name a histogram family this configuration registers; got the string "vllm:num_requests_running"',
  },
  {
    given: { nativeHistograms: { families: ['vllm:time_to_first_token'] } },
    option: 'nativeHistograms.families[0]',
    message: 'nativeHistograms.families[0] must name a histogram family this configuration registers; got the string "vllm:time_to_first_token"',
  },
];

/**
 * Resources the process holds, counted by type (timers, servers, sockets, …), after a turn of the
 * event loop: mocha arms its own test timer once the test function has returned its promise.
 */
async function settledResourceCounts(): Promise<Map<string, number>> {
  await new Promise((resolve) => setImmediate(resolve));
  return resourceCounts();
}

function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/**
 * No resource type has more instances than before (others' sockets may close meanwhile). A close
 * that an earlier test's socket began (a CloseReq) can still be in flight for a few turns, so the
 * counts get up to 100 ms to settle; anything this registration left running stays past that.
 */
async function assertNothingNew(before: Map<string, number>, what: string): Promise<void> {
  const grown = (counts: Map<string, number>) => [...counts].filter(([type, count]) => count > (before.get(type) ?? 0));
  let left = grown(await settledResourceCounts());
  for (let wait = 0; left.length > 0 && wait < 10; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    left = grown(resourceCounts());
  }
  for (const [type, count] of left) assert.fail(`${what}: ${count - (before.get(type) ?? 0)} new ${type} left behind`);
}

describe('options: every bad option is refused before anything starts', () => {
  for (const { given, option, message } of REJECTED) {
    it(`${JSON.stringify(given, (_, value: unknown) => (value instanceof OmniPrometheusReader ? 'reader' : value))}`, async () => {
      const before = await settledResourceCounts();
      await assert.rejects(registerOmniMetrics({ ...STARTING, ...given } as OmniMetricsOptions), (error: unknown) => {
        assert.ok(error instanceof OmniOptionError, `an OmniOptionError, got ${String(error)}`);
        assert.equal(error.option, option);
        assert.equal(error.message, `omni-otel-metrics: ${message}`);
        return true;
      });
      await assertNothingNew(before, option);
    });
  }

  it('options themselves must be an object', () => {
    assert.throws(() => resolveOmniSettings(undefined as unknown as OmniMetricsOptions), {
      message: 'omni-otel-metrics: options must be an object; got undefined',
    });
  });

  it('property: any key that is not an option is refused by name', () => {
    const accepted = new Set(ACCEPTED.split(', '));
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 20 }).filter((key) => !accepted.has(key) && key !== '__proto__'),
        (key) => {
          assert.throws(
            () => resolveOmniSettings({ modelName: 'm', [key]: 1 } as OmniMetricsOptions),
            (error: unknown) => {
              assert.ok(error instanceof OmniOptionError);
              assert.equal(error.option, key);
              assert.ok(error.message.startsWith(`omni-otel-metrics: unknown option ${JSON.stringify(key)}`), error.message);
              return true;
            },
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('OmniInstrumentation and OmniPrometheusReader refuse unknown keys the same way', async () => {
    assert.throws(() => new OmniPrometheusReader({ createdSeries: true, withTargetinfo: true } as never), {
      message:
        'omni-otel-metrics: unknown option "OmniPrometheusReader options.withTargetinfo" (did you mean "withTargetInfo"?); OmniPrometheusReader options accepts store, declaredFamilies, withTargetInfo, withScopeLabels, createdSeries, exposition',
    });
    const handle = await registerOmniMetrics({ modelName: 'm', prometheus: false, selfCheck: false });
    const accepts =
      'OmniInstrumentation config accepts enabled, metrics, orchestratorClass, servingClass, modules, diagnosticsChannels, requestIdleTimeoutMillis, maxTrackedRequests';
    try {
      assert.throws(() => new OmniInstrumentation({ metrics: handle, diagnosticChannels: false } as never), {
        message: `omni-otel-metrics: unknown option "OmniInstrumentation config.diagnosticChannels" (did you mean "diagnosticsChannels"?); ${accepts}`,
      });
      // A key that starts an accepted one, and no metrics: the key is named first.
      assert.throws(() => new OmniInstrumentation({ orchestrator: class {} } as never), {
        message: `omni-otel-metrics: unknown option "OmniInstrumentation config.orchestrator" (did you mean "orchestratorClass"?); ${accepts}`,
      });
    } finally {
      await handle.shutdown();
    }
  });

  it('the other public constructors refuse unknown keys too, naming the closest accepted one', async () => {
    const refused = (message: string) => ({ name: 'OmniOptionError', message: `omni-otel-metrics: ${message}` });
    assert.throws(
      () => new OmniMetricProducer({ temporality: 'delta' } as never),
      refused(
        'unknown option "OmniMetricProducer options.temporality"; OmniMetricProducer options accepts store, aggregationTemporalitySelector, exponentialHistograms',
      ),
    );
    assert.throws(
      () => new LogMetricExporter({ formats: 'json' } as never),
      refused(
        'unknown option "LogMetricExporter options.formats" (did you mean "format"?); LogMetricExporter options accepts format, destination, hostname, catalog',
      ),
    );
    assert.throws(
      () => serveClusterWorker({}, { syncInterval: 5 } as never),
      refused(
        'unknown option "serveClusterWorker options.syncInterval" (did you mean "syncIntervalMillis"?); serveClusterWorker options accepts syncIntervalMillis, flushTimeoutMillis',
      ),
    );
    assert.throws(
      () => new SeriesStore(resolveCatalog({}), { modelName: 'm', cardinalitylimit: 10 } as never),
      refused(
        'unknown option "SeriesStore options.cardinalitylimit" (did you mean "cardinalityLimit"?); SeriesStore options accepts modelName, naming, cardinalityLimit, stageReplicaMap, now, nativeHistograms, exemplars',
      ),
    );
    const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm' });
    assert.throws(
      () => new OmniStatLogger(store, { modelName: 'm', stageReplicaMap: new StageReplicaMap([1]), logInterval: 5 } as never),
      refused(
        'unknown option "OmniStatLogger options.logInterval" (did you mean "logIntervalSeconds"?); OmniStatLogger options accepts modelName, stageReplicaMap, features, cacheConfig, logIntervalSeconds, logSink, wallClock, genAi',
      ),
    );
    await assert.rejects(
      startClusterPrimary({ workerOptions: { modelName: 'm' }, gaugeMerges: {} } as never),
      refused(
        'unknown option "startClusterPrimary options.gaugeMerges" (did you mean "gaugeMerge"?); startClusterPrimary options accepts workerOptions, prometheus, createdSeries, collectTimeoutMillis, gaugeMerge',
      ),
    );
  });

  it('every public constructor and function refuses a bad value as an OmniOptionError naming it', () => {
    const refused = (option: string, message: string) => (error: unknown) => {
      assert.ok(error instanceof OmniOptionError, `an OmniOptionError, got ${String(error)}`);
      assert.deepEqual([error.option, error.message], [option, `omni-otel-metrics: ${message}`]);
      return true;
    };
    const cases: Array<[() => unknown, string, string]> = [
      [() => new LogMetricExporter({ format: 'xml' } as never), 'format', 'format must be one of "statsd", "json"; got the string "xml"'],
      [
        () => new LogMetricExporter({ destination: 42 } as never),
        'destination',
        'destination must be "stdout", "stderr", a writable stream or { file: path }; got 42',
      ],
      [() => new LogMetricExporter({ hostname: '' }), 'hostname', 'hostname must be a non-empty string; got the string ""'],
      [() => new OmniInstrumentation({} as never), 'metrics', 'OmniInstrumentation needs { metrics } from registerOmniMetrics(); got undefined'],
      [
        () => new OmniInstrumentation({ metrics: {}, maxTrackedRequests: 0 } as never),
        'maxTrackedRequests',
        'maxTrackedRequests must be a positive integer; got 0',
      ],
      [() => serveClusterWorker({}, { syncIntervalMillis: -1 }), 'syncIntervalMillis', 'syncIntervalMillis must be a finite number ≥ 0; got -1'],
      [() => serveClusterWorker({}, { flushTimeoutMillis: Number.NaN }), 'flushTimeoutMillis', 'flushTimeoutMillis must be a finite number > 0; got NaN'],
      [
        () => serveClusterWorker(null as never),
        'handle',
        'serveClusterWorker needs the handle registerOmniMetrics() returned, with its prometheusReader (leave prometheusReader on)',
      ],
      [() => new StatsThrottle(null as never), 'StatsThrottle options', 'StatsThrottle options must be an object; got null'],
      [() => new StatsThrottle({ intervalSeconds: -1 }), 'intervalSeconds', 'intervalSeconds must be a finite number ≥ 0; got -1'],
      [
        () => new StatsThrottle({ intervalMillis: 5 } as never),
        'StatsThrottle options.intervalMillis',
        'unknown option "StatsThrottle options.intervalMillis"; StatsThrottle options accepts intervalSeconds, clock',
      ],
      [() => createSpecDecodingStats(1.5), 'numSpecTokens', 'numSpecTokens must be an integer ≥ 0; got 1.5'],
      [() => missedObjectives(undefined as never, TIMINGS), 'slo', 'slo must be an object; got undefined'],
      [() => missedObjectives({ e2eSeconds: 0 }, TIMINGS), 'slo.e2eSeconds', 'slo.e2eSeconds must be a finite number > 0; got 0'],
      [() => missedObjectives({ e2eSeconds: 1 }, null as never), 'request', 'request must be an object of timings; got null'],
      [
        () => missedObjectives({ e2eSeconds: 1 }, { ...TIMINGS, outputTokens: undefined } as never),
        'request.outputTokens',
        'request.outputTokens is required; got undefined',
      ],
      [() => missedObjectives({ e2eSeconds: 1 }, { ...TIMINGS, audioRtf: -0.5 }), 'request.audioRtf', 'request.audioRtf must be a finite number ≥ 0; got -0.5'],
    ];
    for (const [call, option, message] of cases) assert.throws(call, refused(option, message));
    // Absent audio timings may come as null, as JSON carries them.
    assert.deepEqual(missedObjectives({ e2eSeconds: 1, audioRtf: 1 }, { ...TIMINGS, audioRtf: null } as never), []);
  });

  describe('a start that fails after the options were settled', () => {
    let squatter: Server;
    let port: number;
    before(async () => {
      squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
      port = (squatter.address() as AddressInfo).port;
    });
    after(async () => {
      await new Promise((resolve) => squatter.close(resolve));
    });

    it('a taken port: the error names the server and the options; no provider, timer or reader is left', async () => {
      const producer = new OmniMetricProducer();
      const before = await settledResourceCounts();
      await assert.rejects(
        registerOmniMetrics({ ...STARTING, prometheus: { host: '127.0.0.1', port }, metricProducers: [producer] }),
        (error: NodeJS.ErrnoException) => {
          assert.equal(error.code, 'EADDRINUSE');
          assert.match(error.message, new RegExp(`^omni-otel-metrics: the /metrics server cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
          return true;
        },
      );
      await assertNothingNew(before, 'failed listen');
    });

    it("a reader the caller passed in is let go: it no longer reads the registration's store", async () => {
      const reader = new OmniPrometheusReader({ createdSeries: false });
      const provider = new MeterProvider({ readers: [reader] });
      try {
        await assert.rejects(
          registerOmniMetrics({
            modelName: 'm',
            logStats: true,
            meterProvider: provider,
            prometheusReader: reader,
            prometheus: { host: '127.0.0.1', port },
            selfCheck: false,
          }),
          { code: 'EADDRINUSE' },
        );
        assert.equal(await reader.metricsText(), '');
      } finally {
        await provider.shutdown();
      }
    });
  });
});

describe('a provider that cannot take its readers', () => {
  it("a reader of the caller's that another provider already has: the error comes through, the server's port is free again, no push reader runs", async () => {
    const taken = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 3_600_000,
    });
    const other = new MeterProvider({ readers: [taken] });
    const port = await freePort();
    const before = await activeResources();
    try {
      // The push reader built for STARTING's unreachable collector is shut down, and its last export fails, with a warning.
      await expectPrinted(
        [
          'omni-otel-metrics: metrics export to OTLP http/protobuf http://127.0.0.1:9/v1/metrics failed (connect ECONNREFUSED 127.0.0.1:9); the next export that gets through carries the totals (cumulative temporality)',
        ],
        () =>
          assert.rejects(
            registerOmniMetrics({ ...STARTING, prometheus: { host: '127.0.0.1', port }, readers: [taken] }),
            /MetricReader can not be bound to a MeterProvider again/,
          ),
      );
      await assertResourcesBackTo(before, 'after the failed registration');
      const probe = createServer();
      await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', resolve));
      await new Promise((resolve) => probe.close(resolve));
    } finally {
      await other.shutdown();
    }
  });
});

describe('options: what a model name alone gives', () => {
  let handle: OmniMetricsHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
  });

  it('no stagePools: the pipeline families record and print (logStats on); no engine series exist', async () => {
    handle = await registerOmniMetrics({ modelName: 'm', logStats: true, prometheus: false, selfCheck: false, processMetrics: false });
    handle.pipeline.requestSucceeded(0.25, 'stop');
    const text = await handle.metricsText();
    assert.ok(text.includes('vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 1.0\n'), text);
    assert.ok(text.includes('vllm:omni_e2e_request_latency_s_sum{model_name="m"} 0.25\n'), text);
    assert.equal(handle.stageReplicaMap.engineCount, 0);
    assert.doesNotMatch(text, /stage="/);
  });
});
