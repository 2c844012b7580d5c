import assert from 'node:assert/strict';
import { join } from 'node:path';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { InstrumentationModuleDefinition } from '@opentelemetry/instrumentation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { sampleValue } from '../support/exposition';
import { FakeOrchestrator } from './fake-host';

type ModuleHost = {
  ModuleOrchestrator: new () => { addRequest(r: { requestId: string }): string };
  ModuleServing: new () => { generate(r: { requestId: string }): AsyncIterable<unknown> };
};

const running = async (metrics: OmniMetricsHandle): Promise<number | undefined> =>
  sampleValue(await metrics.metricsText(), 'vllm:omni_num_requests_running', { model_name: 'm' });

describe('OmniInstrumentation module hooks', () => {
  it('patches classes exported by a host module when it is loaded, and restores them on disable', async () => {
    const metrics = await registerOmniMetrics({ selfCheck: false, modelName: 'm', stagePools: [1], logStats: true, prometheus: false, logIntervalSeconds: 0 });
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

  it("a module's unpatch leaves other patches alone: another instrumentation's class, and another handle listening to the same class", async () => {
    const register = () => registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, logIntervalSeconds: 0, selfCheck: false });
    const [hooked, other] = await Promise.all([register(), register()]);
    const moduleName = join(__dirname, 'fixtures', 'host-module.js');
    const byModule = new OmniInstrumentation({
      metrics: hooked,
      modules: [{ moduleName, orchestratorExport: 'ModuleOrchestrator', servingExport: 'ModuleServing' }],
      diagnosticsChannels: false,
    });
    // Another instrumentation of the same handle, on another class.
    const onFake = new OmniInstrumentation({ metrics: hooked, orchestratorClass: FakeOrchestrator, diagnosticsChannels: false });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const host = require(moduleName) as ModuleHost;
    // Another handle listening to the module's own class.
    const sameClass = new OmniInstrumentation({ metrics: other, orchestratorClass: host.ModuleOrchestrator, diagnosticsChannels: false });
    try {
      new host.ModuleOrchestrator().addRequest({ requestId: 'before' });
      assert.deepEqual([await running(hooked), await running(other)], [1, 1], 'both handles hear the module class');

      // What the OpenTelemetry require hook calls when the module's patch is undone.
      for (const definition of byModule.getModuleDefinitions() as InstrumentationModuleDefinition[]) {
        for (const file of definition.files) file.unpatch?.(host);
      }

      new host.ModuleOrchestrator().addRequest({ requestId: 'after' });
      assert.deepEqual([await running(hooked), await running(other)], [1, 2], 'the other handle still hears the module class; this one no longer does');
      assert.equal(typeof (host.ModuleOrchestrator.prototype.addRequest as unknown as { __original?: unknown }).__original, 'function', 'still wrapped');
      new FakeOrchestrator().addRequest({ requestId: 'fake' });
      assert.equal(await running(hooked), 2, "the other instrumentation's class is still patched and heard");
      assert.equal(typeof (FakeOrchestrator.prototype.addRequest as unknown as { __original?: unknown }).__original, 'function');
    } finally {
      for (const instrumentation of [byModule, onFake, sameClass]) instrumentation.disable();
      await Promise.all([hooked.shutdown(), other.shutdown()]);
    }
    assert.equal((host.ModuleOrchestrator.prototype.addRequest as unknown as { __original?: unknown }).__original, undefined, 'restored at the end');
  });
});
