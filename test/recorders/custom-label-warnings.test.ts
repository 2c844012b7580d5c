import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { seriesOf } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';

const CONFIG = [
  'families:',
  '  - name: myapp:cache_hits_total',
  '    type: counter',
  '    help: TTS cache hits.',
  '    labels: [model_name, stage]',
  '  - name: myapp:queue_depth',
  '    type: gauge',
  '    help: Requests queued.',
  '    labels: [model_name, stage]',
  '',
].join('\n');

describe('custom families: a label mistake is said once per family and kind, whatever the names', () => {
  let dir: string;
  let handle: OmniMetricsHandle;
  /** A handle recording the config file's families; each has warnings of its own. */
  const register = (): Promise<OmniMetricsHandle> =>
    registerOmniMetrics({ modelName: 'm', prometheus: false, exporters: [], logIntervalSeconds: 0, selfCheck: false, configFile: join(dir, 'metrics.yaml') });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'omni-custom-labels-'));
    writeFileSync(join(dir, 'metrics.yaml'), CONFIG);
    handle = await register();
  });

  after(async () => {
    await handle.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('10 000 distinct undeclared names (a request id as a key) are one line, and a later mistake of another kind or family is still said', async () => {
    const hits = handle.custom.counter('myapp:cache_hits_total');
    const depth = handle.custom.gauge('myapp:queue_depth');
    const { warnings } = withWarnings(() => {
      for (let i = 0; i < 10_000; i++) hits.add(1, { stage: 0, [`request_${i}`]: 'x' } as never);
      hits.add(1, { stage: 0, ['k'.repeat(1_000_000)]: 'x' } as never);
      hits.add(1, {} as never);
      depth.set(1, { stage: 0, region: 'eu' } as never);
    });
    const takes = (family: string): string => `(${family} takes labels stage; model_name is filled in); said once per kind of mistake`;
    assert.deepEqual(warnings, [
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, label "request_0" not declared ${takes('myapp:cache_hits_total')}`,
      `omni-otel-metrics: myapp:cache_hits_total: record dropped, label stage missing ${takes('myapp:cache_hits_total')}`,
      `omni-otel-metrics: myapp:queue_depth: record dropped, label "region" not declared ${takes('myapp:queue_depth')}`,
    ]);
    const text = await handle.metricsText();
    assert.deepEqual(seriesOf(text, 'myapp:cache_hits_total'), []);
    assert.deepEqual(seriesOf(text, 'myapp:queue_depth'), []);
  });

  it('the one line names at most three undeclared labels, each cut at 64 characters (a megabyte key stays out of the log)', async () => {
    const other = await register();
    try {
      const hits = other.custom.counter('myapp:cache_hits_total');
      const { warnings } = withWarnings(() => hits.add(1, { stage: 0, ['k'.repeat(1_000_000)]: 'x', a: 1, b: 2, c: 3 } as never));
      assert.deepEqual(warnings, [
        `omni-otel-metrics: myapp:cache_hits_total: record dropped, labels "${'k'.repeat(64)}…", "a", "b" and 1 more not declared (myapp:cache_hits_total takes labels stage; model_name is filled in); said once per kind of mistake`,
      ]);
    } finally {
      await other.shutdown();
    }
  });
});
