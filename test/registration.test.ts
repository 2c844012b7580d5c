import assert from 'node:assert/strict';
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { OmniPrometheusReader } from '../exporters/prometheus-reader';
import { registerOmniMetrics } from '../register';
import { resolveCatalog } from '../views/catalog/catalog';
import { StageReplicaMap } from '../views/stage-replica-map';
import { createOmniViews } from '../views/views';
import { populateEveryFamily } from './support/populate';

describe('registerOmniMetrics', () => {
  it('logs no diag warning at startup or on collection for any catalog family', async () => {
    const messages: string[] = [];
    const capture = (level: string) => (message: string) => messages.push(`${level}: ${message}`);
    const logger: DiagLogger = { error: capture('error'), warn: capture('warn'), info: capture('info'), debug: () => {}, verbose: () => {} };
    diag.setLogger(logger, { logLevel: DiagLogLevel.INFO, suppressOverrideMessage: true });
    try {
      const handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [2, 1],
        logStats: true,
        showHiddenMetrics: true,
        features: { specDecode: { numSpeculativeTokens: 2 }, kvConnector: 'nixl', lora: { maxLoras: 2 }, kvCacheMetrics: true, corruptedRequests: true },
        prometheus: false,
        logIntervalSeconds: 0,
        // Synthetic samples on stage 1 replica 1 only: the self-check's shutdown summary would (rightly) name the others.
        selfCheck: false,
      });
      populateEveryFamily(handle);
      await handle.metricsText();
      await handle.shutdown();
    } finally {
      diag.disable();
    }
    assert.deepEqual(messages, []);
  });

  it('validates options before starting anything', async () => {
    await assert.rejects(registerOmniMetrics({ modelName: '', stagePools: [1] }), /modelName must be a non-empty string/);
    await assert.rejects(registerOmniMetrics({ modelName: 'm', stagePools: [0] }), /stagePools\[0\] must be a positive integer/);
    await assert.rejects(registerOmniMetrics({ modelName: 'm', stagePools: [1], maxModelLen: -1 }), /maxModelLen must be a positive integer/);
    await assert.rejects(
      registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: { port: 65536 } }),
      /prometheus.port must be an integer from 0 to 65535/,
    );
  });

  it('works with a MeterProvider the user already has (views and reader passed in)', async () => {
    const options = { logStats: true, prefix: 'vllm_omni:' as const };
    const stagePools = [1, 2];
    const reader = new OmniPrometheusReader();
    const provider = new MeterProvider({
      readers: [reader],
      views: createOmniViews(resolveCatalog(options), { stageReplicaMap: new StageReplicaMap(stagePools) }),
    });
    const handle = await registerOmniMetrics({
      ...options,
      modelName: 'm',
      stagePools,
      meterProvider: provider,
      prometheusReader: reader,
      prometheus: false,
      logIntervalSeconds: 0,
      selfCheck: false,
    });
    handle.pipeline.requestFailed();
    const text = await handle.metricsText();
    await handle.shutdown();
    assert.ok(text.includes('vllm_omni:requests_success_total{finished_reason="abort",model_name="m"} 1.0\n'));
    // The user's provider is theirs: still usable after the handle shut down.
    provider.getMeter('mine').createCounter('after').add(1);
    assert.ok((await reader.metricsText()).includes('after_total 1.0'));
    await provider.shutdown();
  });

  it('logStats off: pipeline families declared but silent, upstream families absent', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false });
    handle.pipeline.requestSucceeded(1);
    handle.audio.observeAudioTtfp(0, 0, 0.2);
    handle.transfer.observeSize(0, 0, 1, 0, 10);
    const text = await handle.metricsText();
    await handle.shutdown();
    assert.equal(handle.statLogger, undefined);
    assert.ok(!text.includes('finished_reason'));
    assert.ok(!text.includes('audio_ttfp_s_bucket'));
    assert.ok(!text.includes('vllm:e2e_request_latency_seconds'));
    assert.ok(text.includes('vllm:omni_e2e_request_latency_s_count{model_name="m"} 0.0'));
  });
});

describe('the built package', () => {
  const root = join(__dirname, '..');
  it('loads through require and through import (package.json exports), with the same exports', function () {
    this.timeout(30_000);
    // Run from the package root so Node resolves the package's own name through its "exports".
    const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();
    // Interop names Node adds itself: `default` and `__esModule`, and from Node 23 on, the CommonJS
    // namespace's `module.exports` (which the ESM wrapper's `export *` passes on).
    const listing = "Object.keys(m).filter((k) => !['default', '__esModule', 'module.exports'].includes(k)).sort().join(',')";
    const viaRequire = run(['-e', `const m = require('omni-otel-metrics'); console.log(${listing})`]);
    const viaImport = run(['--input-type=module', '-e', `import * as m from 'omni-otel-metrics'; console.log(${listing})`]);
    assert.equal(viaImport, viaRequire);
    assert.ok(viaRequire.split(',').includes('registerOmniMetrics'));
  });
});
