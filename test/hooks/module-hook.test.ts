import assert from 'node:assert/strict';
import { join } from 'node:path';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics } from '../../register';

describe('OmniInstrumentation module hooks', () => {
  it('patches classes exported by a host module when it is loaded, and restores them on disable', async () => {
    const metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, logIntervalSeconds: 0 });
    const moduleName = join(__dirname, 'fixtures', 'host-module.js');
    const instrumentation = new OmniInstrumentation({
      metrics,
      modules: [{ moduleName, orchestratorExport: 'ModuleOrchestrator', servingExport: 'ModuleServing' }],
    });
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const host = require(moduleName) as {
        ModuleOrchestrator: new () => { addRequest(r: { requestId: string }): string };
        ModuleServing: new () => { generate(r: { requestId: string }): AsyncIterable<unknown> };
      };
      const wrapped = host.ModuleServing.prototype.generate as unknown as { __original?: unknown };
      assert.equal(typeof wrapped.__original, 'function', 'generate is wrapped at load time');
      assert.equal(new host.ModuleOrchestrator().addRequest({ requestId: 'a' }), 'added:a');
      for await (const _ of new host.ModuleServing().generate({ requestId: 'a' })) {
        // drain
      }
      const text = await metrics.metricsText();
      assert.ok(text.includes('vllm:omni_requests_success_total{finished_reason="length",model_name="m"} 1.0\n'));
      instrumentation.disable();
      assert.equal((host.ModuleServing.prototype.generate as unknown as { __original?: unknown }).__original, undefined, 'restored');
    } finally {
      instrumentation.disable();
      await metrics.shutdown();
    }
  });
});
