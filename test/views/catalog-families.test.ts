import assert from 'node:assert/strict';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { formatGoFloat } from '../../views/common/go-float';
import { resolveFullCatalog } from '../../views/catalog/catalog';
import { populateEveryFamily } from '../support/populate';

/**
 * One generated test per catalog family: after one sample is recorded the way a host would,
 * the exposition carries the family's exact name, TYPE, HELP, label names and bucket bounds.
 */
describe('every catalog family in the exposition', () => {
  // The offloading connectors have their own generated tests (one KV connector per registration).
  const OWN_TESTS = new Set(['kvOffload', 'simpleKvOffload']);
  const catalog = { families: resolveFullCatalog().families.filter((f) => !OWN_TESTS.has(f.group)) };
  let handle: OmniMetricsHandle;
  let text: string;
  let lines: string[];

  before(async () => {
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2, 1],
      stageNames: ['thinker', 'talker', 'code2wav'],
      slo: { e2eSeconds: 5 },
      logStats: true,
      selfCheck: false,
      showHiddenMetrics: true,
      features: {
        specDecode: { numSpeculativeTokens: 1 },
        kvConnector: 'nixl',
        lora: { maxLoras: 1 },
        kvCacheMetrics: true,
        corruptedRequests: true,
      },
      prometheus: false,
      logIntervalSeconds: 0,
    });
    populateEveryFamily(handle);
    text = await handle.metricsText();
    lines = text.split('\n');
  });

  after(() => handle.shutdown());

  it('registers exactly the full catalog', () => {
    assert.deepEqual(
      handle.catalog.families.map((f) => f.name),
      catalog.families.map((f) => f.name),
    );
  });

  for (const family of catalog.families) {
    it(`${family.name}: name, type, HELP, labels${family.type === 'histogram' ? ', buckets' : ''}`, () => {
      const helpIndex = lines.indexOf(`# HELP ${family.name} ${family.help}`);
      assert.ok(helpIndex >= 0, `HELP line for ${family.name}`);
      assert.equal(lines[helpIndex + 1], `# TYPE ${family.name} ${family.type}`);
      assert.equal(lines.filter((l) => l.startsWith(`# HELP ${family.name} `)).length, 1, 'exactly one HELP');

      const sampleName = family.type === 'histogram' ? `${family.name}_bucket` : family.name;
      // The populated series only (an eagerly bound family also has its zero series).
      const samples = lines.filter((l) => (l.startsWith(`${sampleName}{`) || l.startsWith(`${sampleName} `)) && !l.includes('model_name="m"'));
      assert.ok(samples.length > 0, `a sample of ${family.name}`);
      const labelNames = [...(samples[0] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1]);
      const expected = [...family.labels, ...(family.info ? ['block_size'] : []), ...(family.type === 'histogram' ? ['le'] : [])];
      assert.deepEqual(labelNames, [...expected].sort(), 'label names, sorted as prometheus_client prints them');
      assert.ok(!labelNames.includes('engine'), 'no engine label');

      if (family.type === 'histogram') {
        const les = samples.map((l) => /le="([^"]+)"/.exec(l)?.[1]);
        assert.deepEqual(les, [...(family.buckets ?? []).map(formatGoFloat), '+Inf']);
      }
    });
  }
});
