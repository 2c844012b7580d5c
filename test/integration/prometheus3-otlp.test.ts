import assert from 'node:assert/strict';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { createRequestStateStats, createSchedulerStats } from '../../instrumentation/stats/types';
import { COLLECTOR_TRANSLATION_STRATEGIES, collectorPrometheusName, NAMING_EXAMPLE_FAMILIES } from '../../exporters/otlp/collector-naming';
import { registerOmniMetrics } from '../../register';
import { resolveFullCatalog, type FamilyKey } from '../../views/catalog/catalog';
import { httpGet } from '../support/http';
import { needPeer } from '../support/peers/need-peer';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';

/** The table's families that this run records into (the transfer histogram needs a pipeline's hops, and is left out). */
const RECORDED: readonly FamilyKey[] = NAMING_EXAMPLE_FAMILIES.filter((key) => key !== 'pipeline.transferSize');

/** Pushes one export of every naming-table family under `naming` to `endpoint`, then stops. */
async function pushOnce(endpoint: string, naming: 'vllm' | 'otel'): Promise<void> {
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: [1],
    logStats: true,
    logIntervalSeconds: 0,
    processMetrics: false,
    selfCheck: false,
    naming,
    slo: { e2eSeconds: 1 },
    serviceName: `omni-${naming}`,
    exporters: ['otlp'],
    otlp: { protocol: 'http/protobuf', endpoint, exportIntervalMillis: 60_000 },
  });
  const iteration = new IterationStats({ iterationTimestamp: 1000 });
  const request = createRequestStateStats({ arrivalTime: 999, queuedTs: 5, scheduledTs: 5.5, firstTokenTs: 6, lastTokenTs: 7, numGenerationTokens: 5 });
  iteration.updateFromFinishedRequest({ finishReason: 'stop', numPromptTokens: 12, maxTokensParam: 16 }, request);
  handle.statLogger?.record(createSchedulerStats({ numRunningReqs: 1, kvCacheUsage: 0.25 }), iteration, 0);
  handle.pipeline.requestSucceeded(1.5, 'stop');
  // One request over its e2e objective: a miss; the good counter keeps its zero series.
  handle.slo?.requestFinished(undefined, 'stop', { firstOutputSeconds: 0.2, e2eSeconds: 1.5, outputTokens: 5 });
  await handle.forceFlush();
  await handle.shutdown();
}

/** Every metric name the server stored. */
async function storedNames(prometheus: PrometheusHandle): Promise<Set<string>> {
  const answer = JSON.parse((await httpGet(`${prometheus.url}/api/v1/label/__name__/values`)).body) as { data: string[] };
  return new Set(answer.data);
}

/**
 * Prometheus 3.16 with its OTLP receiver on (`--web.enable-otlp-receiver`), once per
 * `otlp.translation_strategy`, receives the package's push under both naming schemes: it stores
 * each family under exactly the name the OTLP naming table of docs/otlp.md gives (the table is
 * generated from `collectorPrometheusName`, which this checks against the real server).
 */
describe("Prometheus 3's OTLP receiver: the names docs/otlp.md promises, under each translation strategy", function () {
  const prometheus3 = needPeer('prometheus3', this);
  this.timeout(120_000);
  const catalog = resolveFullCatalog();

  for (const strategy of COLLECTOR_TRANSLATION_STRATEGIES) {
    it(`${strategy}: both naming schemes`, async function () {
      const { bin } = prometheus3.paths();
      const prometheus = await startPrometheus({
        binary: bin.prometheus,
        scrapeTargets: [],
        extraArgs: ['--web.enable-otlp-receiver'],
        config: { otlp: { translation_strategy: strategy } },
      });
      try {
        const endpoint = `${prometheus.url}/api/v1/otlp/v1/metrics`;
        for (const naming of ['vllm', 'otel'] as const) await pushOnce(endpoint, naming);
        const stored = await storedNames(prometheus);
        const expected: string[] = [];
        for (const key of RECORDED) {
          const family = catalog.byKey(key);
          assert.ok(family, key);
          // Histograms are stored as their _bucket / _count / _sum series; look for the _count.
          const series = (name: string): string => (family.type === 'histogram' ? `${name}_count` : name);
          expected.push(series(collectorPrometheusName(family.name, '', family.type, strategy)));
          expected.push(series(collectorPrometheusName(family.otelName, family.unit, family.type, strategy)));
        }
        assert.deepEqual(
          expected.filter((name) => !stored.has(name)),
          [],
          `stored: ${[...stored].filter((name) => /prompt_tokens|e2e_request|kv_cache_usage|requests_success|requests_good|slo_misses/.test(name)).join(', ')}`,
        );
      } finally {
        await prometheus.stop();
      }
    });
  }
});
