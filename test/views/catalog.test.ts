import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveCatalog, resolveFullCatalog } from '../../views/catalog/catalog';
import { build125Buckets } from '../../views/catalog/buckets';

const names = (catalog: ReturnType<typeof resolveCatalog>): string[] => catalog.families.map((f) => f.name);

describe('catalog resolution', () => {
  it('declares only the 42 pipeline families when logStats is off', () => {
    const catalog = resolveCatalog({ logStats: false });
    assert.equal(catalog.families.length, 42);
    assert.ok(catalog.families.every((f) => f.group === 'pipeline' && f.name.startsWith('vllm:omni_')));
    assert.deepEqual(names(catalog).slice(0, 4), [
      'vllm:omni_num_requests_running',
      'vllm:omni_num_requests_waiting',
      'vllm:omni_requests_success_total',
      'vllm:omni_e2e_request_latency_s',
    ]);
  });

  it('adds the 38 always-registered upstream families when logStats is on (vLLM 0.32: admission rejections among them)', () => {
    const catalog = resolveCatalog({ logStats: true });
    assert.equal(catalog.families.length, 42 + 38);
    assert.equal(catalog.families.filter((f) => f.group === 'core').length, 38);
    assert.ok(catalog.byName('vllm:admission_rejections_total'), 'registered without a feature option');
    assert.ok(catalog.byName('vllm:iteration_tokens_total'), 'histogram keeps its _total');
    assert.ok(catalog.byName('vllm:estimated_flops_per_gpu_total'), 'counter gets _total once');
    assert.equal(catalog.byName('vllm:gpu_cache_usage_perc'), undefined, 'deprecated names stay hidden');
  });

  it('registers each conditional group only with its feature', () => {
    const count = (features: Parameters<typeof resolveCatalog>[0]) => resolveCatalog({ logStats: true, ...features }).families.length;
    const base = count({});
    assert.equal(count({ features: { specDecode: { numSpeculativeTokens: 3 } } }) - base, 4);
    assert.equal(count({ features: { kvConnector: 'nixl' } }) - base, 7);
    assert.equal(count({ features: { lora: { maxLoras: 2 } } }) - base, 1);
    assert.equal(count({ features: { kvCacheMetrics: true } }) - base, 3);
    assert.equal(count({ features: { corruptedRequests: true } }) - base, 1);
    assert.equal(count({ showHiddenMetrics: true }) - base, 4);
    assert.equal(resolveCatalog({ logStats: false, showHiddenMetrics: true, features: { kvConnector: 'nixl' } }).families.length, 42);
  });

  it('rewrites engine into stage and replica on every upstream family', () => {
    for (const family of resolveFullCatalog().families) {
      assert.ok(!family.labels.includes('engine'), family.name);
      if (family.engineLabel) {
        const at = family.labels.indexOf('stage');
        assert.deepEqual(family.labels.slice(at, at + 2), ['stage', 'replica'], family.name);
      }
    }
    assert.deepEqual(resolveFullCatalog().byName('vllm:request_success_total')?.labels, ['model_name', 'stage', 'replica', 'finished_reason']);
  });

  it('uses the vllm_omni: prefix when asked', () => {
    const catalog = resolveCatalog({ prefix: 'vllm_omni:' });
    assert.equal(names(catalog)[2], 'vllm_omni:requests_success_total');
    assert.equal(catalog.byKey('pipeline.audioTtfp')?.instrumentName, 'vllm_omni.audio_ttfp_s');
    assert.throws(() => resolveCatalog({ prefix: 'omni:' as never }), /prefix must be one of vllm:omni_, vllm_omni:/);
  });

  it('derives the token buckets from maxModelLen with the 1-2-5 series', () => {
    assert.deepEqual(build125Buckets(4096), [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]);
    assert.deepEqual(build125Buckets(1024), [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]);
    assert.deepEqual(build125Buckets(5), [1, 2, 5]);
    assert.throws(() => build125Buckets(0), /maxModelLen must be a positive integer/);
    const catalog = resolveCatalog({ logStats: true, maxModelLen: 32768 });
    assert.deepEqual(catalog.byName('vllm:request_prompt_tokens')?.buckets, build125Buckets(32768));
    assert.deepEqual(catalog.byName('vllm:request_params_max_tokens')?.buckets?.at(-1), 20000);
  });

  it('applies bucket overrides by exposed name', () => {
    const catalog = resolveCatalog({ logStats: true, buckets: { 'vllm:e2e_request_latency_seconds': [1, 10] } });
    assert.deepEqual(catalog.byName('vllm:e2e_request_latency_seconds')?.buckets, [1, 10]);
    assert.deepEqual(catalog.byName('vllm:request_queue_time_seconds')?.buckets?.slice(0, 2), [0.3, 0.5]);
  });

  it('names no family twice and uses OpenTelemetry-valid instrument names', () => {
    const catalog = resolveFullCatalog();
    assert.equal(new Set(names(catalog)).size, catalog.families.length);
    for (const family of catalog.families) assert.match(family.instrumentName, /^[a-z][a-z0-9_.\-/]{0,254}$/i);
  });
});

/** The catalog against the reference facts gathered from vLLM's own source, kept with the tests so a clean clone runs it. */
describe('catalog against the upstream reference', () => {
  const referencePath = join(__dirname, 'fixtures', 'upstream-catalog.json');
  interface ReferenceFamily {
    name: string;
    exposed_name: string;
    type: string;
    help: string;
    labels: string[];
    buckets: number[] | null;
    buckets_resolved_for_max_model_len?: number;
    category: string;
  }

  it('matches every mainline family byte for byte (name, type, HELP, labels, buckets)', () => {
    const reference = JSON.parse(readFileSync(referencePath, 'utf8')) as ReferenceFamily[];
    const catalog = resolveFullCatalog({ maxModelLen: 4096 });
    const mainline = reference.filter(
      (f) =>
        f.category === 'core_always_registered' ||
        f.category === 'conditional' ||
        ['vllm:gpu_cache_usage_perc', 'vllm:gpu_prefix_cache_queries', 'vllm:gpu_prefix_cache_hits', 'vllm:time_per_output_token_seconds'].includes(f.name),
    );
    assert.equal(mainline.length, 57);
    for (const ref of mainline) {
      const family = catalog.byName(ref.exposed_name);
      assert.ok(family, ref.exposed_name);
      assert.equal(family.help, ref.help, `${ref.exposed_name} HELP`);
      assert.equal(family.type, ref.type === 'info-gauge' ? 'gauge' : ref.type, `${ref.exposed_name} type`);
      const labels = ref.name === 'vllm:cache_config_info' ? ['engine'] : ref.labels;
      assert.deepEqual(
        family.labels,
        labels.flatMap((l) => (l === 'engine' ? ['stage', 'replica'] : [l])),
        `${ref.exposed_name} labels`,
      );
      if (ref.buckets) assert.deepEqual(family.buckets, ref.buckets, `${ref.exposed_name} buckets`);
    }
    const newer = new Set(['kvOffload', 'simpleKvOffload']);
    const newerCore = new Set(['vllm:admission_rejections_total']);
    assert.equal(
      catalog.families.filter((f) => f.name.startsWith('vllm:') && !f.name.startsWith('vllm:omni_') && !newer.has(f.group) && !newerCore.has(f.name)).length,
      57,
    );
  });
});
