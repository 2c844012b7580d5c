import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OmniStatLogger } from '../../instrumentation/recorders/stat-logger';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import type { OmniMetricsOptions } from '../../options';
import { resolveFullCatalog } from '../../views/catalog/catalog';
import { formatGoFloat } from '../../views/common/go-float';

/** Facts written down from vLLM's own code (see each entry's `source`), never from the catalog. */
interface UpstreamFact {
  name: string;
  type: string;
  help: string;
  labels: string[];
  buckets?: number[];
}
const FACTS = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'vllm-032-families.json'), 'utf8')) as UpstreamFact[];

/**
 * Feeds every family of one feature through the host path (scheduler stats of engine 2 =
 * stage 1 / replica 1, and `recordAdmissionRejection`), as a vLLM 0.32 engine would report it.
 */
async function exposition(features: OmniMetricsOptions['features']): Promise<string> {
  const handle: OmniMetricsHandle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: [1, 2, 1],
    logStats: true,
    features,
    prometheus: false,
    logIntervalSeconds: 0,
  });
  try {
    const logger = handle.statLogger as OmniStatLogger;
    logger.record(
      createSchedulerStats({
        kvOffloadStats: {
          loadBytes: 3e6,
          loadTime: 0.25,
          loadSize: [3e6],
          storeBytes: 7e6,
          storeTime: 0.5,
          storeSize: [7e6],
          lookupSyncDelaySeconds: [0.0002],
          lookupAsyncDelaySeconds: [0.2],
          allocationFailures: 1,
          storesSkipped: 2,
        },
        simpleKvOffloadStats: {
          saveOutcomes: { stored: 4 },
          loadBlocks: { issued: 3, completed: 2 },
          usedBlocks: 5,
          pendingStoreBlocks: 1,
          info: { backend: 'cpu', pageCache: false, lazyOffload: true, capacityBlocks: 1024 },
        },
      }),
      null,
      2,
    );
    logger.recordAdmissionRejection('max_num_queued_reqs');
    return await handle.metricsText();
  } finally {
    await handle.shutdown();
  }
}

const FEATURE_OF: Record<string, OmniMetricsOptions['features']> = {
  kvOffload: { kvConnector: 'offloading' },
  simpleKvOffload: { kvConnector: 'simple-cpu-offload' },
  // Registered with the stat logger's own families, no feature needed.
  core: {},
};
/** The vLLM 0.32 families that are not in a connector group. */
const CORE_032 = new Set(['vllm:admission_rejections_total']);

describe('vLLM 0.32 families: one generated test each, against upstream facts', () => {
  const catalog = resolveFullCatalog();
  const texts = new Map<string, string>();
  before(async () => {
    for (const [group, features] of Object.entries(FEATURE_OF)) texts.set(group, await exposition(features));
  });

  it('the fixture names exactly the catalog families of the two connector groups and admission rejections', () => {
    const ours = catalog.families.filter((f) => f.group in FEATURE_OF && (f.group !== 'core' || CORE_032.has(f.name))).map((f) => f.name);
    assert.deepEqual(
      ours,
      FACTS.map((f) => f.name),
    );
  });

  for (const fact of FACTS) {
    it(`${fact.name}: HELP, TYPE, labels (engine as stage/replica)${fact.buckets ? ', buckets' : ''}`, () => {
      const family = catalog.byName(fact.name);
      assert.ok(family);
      const lines = (texts.get(family.group) ?? '').split('\n');
      const help = lines.indexOf(`# HELP ${fact.name} ${fact.help}`);
      assert.ok(help >= 0, `HELP line of ${fact.name}`);
      assert.equal(lines[help + 1], `# TYPE ${fact.name} ${fact.type}`);
      const sample = fact.type === 'histogram' ? `${fact.name}_bucket{` : `${fact.name}{`;
      const samples = lines.filter((l) => l.startsWith(sample));
      assert.ok(samples.length > 0, `a sample of ${fact.name}`);
      const expected = fact.labels.flatMap((l) => (l === 'engine' ? ['replica', 'stage'] : [l]));
      const names = [...(samples.find((l) => l.includes('stage="1"')) ?? samples[0] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1]);
      assert.deepEqual(names, [...expected, ...(fact.buckets ? ['le'] : [])].sort());
      if (fact.labels.includes('engine'))
        assert.ok(
          samples.some((l) => l.includes('replica="1"') && l.includes('stage="1"')),
          'engine 2 relabelled',
        );
      if (fact.buckets) {
        const les = samples.filter((l) => l.includes('stage="1"') && l.includes('replica="1"') && !l.includes('transfer_type="GPU_to_CPU"'));
        assert.deepEqual(
          les.map((l) => /le="([^"]+)"/.exec(l)?.[1]),
          [...fact.buckets.map(formatGoFloat), '+Inf'],
        );
      }
    });
  }

  it('the offloading payload lands where vLLM puts it: flat names and, for the CPU spec, the transfer_type ones', () => {
    const text = texts.get('kvOffload') ?? '';
    const at = 'model_name="m",replica="1",stage="1"';
    assert.ok(text.includes(`vllm:kv_offload_load_bytes_total{${at}} 3e+06`), 'load bytes');
    assert.ok(text.includes(`vllm:kv_offload_store_time_total{${at}} 0.5`), 'store time');
    assert.ok(text.includes(`vllm:kv_offload_stores_skipped_total{${at}} 2`), 'stores skipped');
    assert.ok(text.includes(`vllm:kv_offload_total_bytes_total{${at},transfer_type="CPU_to_GPU"} 3e+06`), 'deprecated load bytes');
    assert.ok(text.includes(`vllm:kv_offload_total_bytes_total{${at},transfer_type="GPU_to_CPU"} 7e+06`), 'deprecated store bytes');
    assert.ok(text.includes(`vllm:kv_offload_allocation_failure_total{${at}} 1`), 'allocation failures');
    // vLLM creates every engine's transfer_type children at start: an idle engine shows them at zero.
    assert.ok(text.includes('vllm:kv_offload_total_time_total{model_name="m",replica="0",stage="0",transfer_type="GPU_to_CPU"} 0'), 'idle engine at zero');
    // The flat families' children are created on an engine's first payload entry: the idle engine has none.
    assert.ok(!text.includes('vllm:kv_offload_load_bytes_total{model_name="m",replica="0",stage="0"}'), 'no flat series for the idle engine');
  });

  it('admission rejections carry model_name and reason only (no stage, no replica)', () => {
    const text = texts.get('core') ?? '';
    assert.ok(text.includes('vllm:admission_rejections_total{model_name="m",reason="max_num_queued_reqs"} 1'), text);
  });

  // vLLM #55812 lists `vllm:admission_rejections_total` in EXPECTED_METRICS_V1, which
  // test_metrics_exist checks (`assert metric in response.text`) on a server started with no
  // --max-num-queued-* flag: the family is registered whether or not a cap is configured.
  it('admission rejections: HELP and TYPE with no feature option and no rejection yet, no series', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, logIntervalSeconds: 0 });
    try {
      const lines = (await handle.metricsText()).split('\n');
      const help = lines.indexOf('# HELP vllm:admission_rejections_total Number of admission attempts rejected');
      assert.ok(help >= 0, 'HELP line');
      assert.equal(lines[help + 1], '# TYPE vllm:admission_rejections_total counter');
      assert.equal(lines.filter((l) => l.startsWith('vllm:admission_rejections_total')).length, 0, 'no reason series before a rejection');
    } finally {
      await handle.shutdown();
    }
  });
});
