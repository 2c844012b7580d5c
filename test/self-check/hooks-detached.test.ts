import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { InstrumentationModuleDefinition } from '@opentelemetry/instrumentation';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { hostCallCountsOf } from '../../instrumentation/self-check/host-calls';
import type { SelfCheckReport } from '../../instrumentation/self-check/types';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { drain, FullOrchestrator, OrchestratorWithoutTransfers, SelfCheckServing } from './self-check-host';

/** The report without its wall-clock time. */
const body = (report: SelfCheckReport): Omit<SelfCheckReport, 'checkedAt'> => {
  const { checkedAt: _checkedAt, ...rest } = report;
  return rest;
};

const QUIET = { requestsObserved: 2, requestsFlowed: false, silent: [], unpolledReplicas: [] };

/** Unpatches a module the way the OpenTelemetry require hook does when it unloads it: each file's `unpatch`. */
function unpatchModule(instrumentation: OmniInstrumentation, exports: unknown): void {
  const definitions = instrumentation.getModuleDefinitions() as InstrumentationModuleDefinition[];
  for (const definition of definitions) {
    definition.unpatch?.(exports);
    for (const file of definition.files) file.unpatch?.(exports);
  }
}

describe('self-check: it knows when its hooks are gone', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation | undefined;
  beforeEach(async () => {
    metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1, 2], logStats: true, prometheus: false, logIntervalSeconds: 0, selfCheck: false });
  });
  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await metrics.shutdown();
  });

  it('disable() detaches the hooks and enable() attaches them again', async () => {
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FullOrchestrator, servingClass: SelfCheckServing, diagnosticsChannels: false });
    const serving = new SelfCheckServing(new FullOrchestrator());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 1);
    assert.deepEqual(body(metrics.selfCheck()), { ...QUIET, requestsFlowed: true, hooksAttached: true });
    instrumentation.disable();
    assert.deepEqual(body(metrics.selfCheck()), { ...QUIET, hooksAttached: false });
    instrumentation.enable();
    assert.deepEqual(body(metrics.selfCheck()), { ...QUIET, hooksAttached: true });
  });

  it('the channels alone are a source: subscribed, the hooks are attached; unsubscribed, they are not', () => {
    instrumentation = new OmniInstrumentation({ metrics, diagnosticsChannels: true });
    assert.equal(metrics.selfCheck().hooksAttached, true);
    instrumentation.disable();
    assert.equal(metrics.selfCheck().hooksAttached, false);
  });

  it('a silent family is still explained by the counts the hooks left, saying they are detached now', async () => {
    instrumentation = new OmniInstrumentation({
      metrics,
      orchestratorClass: OrchestratorWithoutTransfers,
      servingClass: SelfCheckServing,
      diagnosticsChannels: false,
    });
    const serving = new SelfCheckServing(new OrchestratorWithoutTransfers());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 1);
    assert.equal(metrics.selfCheck().silent.length, 4);
    instrumentation.disable();
    const report = metrics.selfCheck();
    assert.equal(report.hooksAttached, false);
    assert.deepEqual(report.silent[0], {
      name: 'vllm:omni_transfer_size_bytes',
      reason: 'host-method-not-called',
      source: 'sendToNextStage: the TransferReceipt sendToNextStage returns',
      detail:
        'the hooks were attached (they are detached now) but sendToNextStage was never called (nor its diagnostics channel published): the host class has no sendToNextStage, or never calls it, or a sendToNextStage bound or copied before the hooks were attached (`const sendToNextStage = host.sendToNextStage.bind(host)`, a destructured method) calls the original, which the hooks never see: create the OmniInstrumentation before the host binds its methods',
      method: 'sendToNextStage',
      silentChecks: 1,
    });
  });

  it("a module hook's unpatch detaches its hooks while the instrumentation stays enabled", () => {
    const moduleName = join(__dirname, '..', 'hooks', 'fixtures', 'host-module.js');
    instrumentation = new OmniInstrumentation({
      metrics,
      modules: [{ moduleName, orchestratorExport: 'ModuleOrchestrator', servingExport: 'ModuleServing' }],
      diagnosticsChannels: false,
    });
    assert.equal(metrics.selfCheck().hooksAttached, false, 'nothing is patched before the module loads');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const host = require(moduleName) as { ModuleOrchestrator: { prototype: object } };
    assert.equal(metrics.selfCheck().hooksAttached, true);
    unpatchModule(instrumentation, host);
    assert.equal(instrumentation.isEnabled(), true);
    assert.equal(metrics.selfCheck().hooksAttached, false);
  });

  it("the handle's shutdown detaches the hooks of every instrumentation that fed it", async () => {
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FullOrchestrator, servingClass: SelfCheckServing });
    const counts = hostCallCountsOf(metrics);
    assert.equal(counts?.attached, true);
    await metrics.shutdown();
    assert.equal(counts?.attached, false);
    assert.equal(counts?.wereAttached, true);
  });
});
