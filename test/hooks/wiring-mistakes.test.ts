import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';
import { FakeOrchestrator, FakeServing } from './fake-host';

class Unrelated {
  start(): void {}
  stop(): void {}
}

/** Methods as arrow-function fields: on each instance, never on the prototype the hooks patch. */
class ArrowOrchestrator {
  addRequest = (): void => undefined;
  pollEngine = (): void => undefined;
}

describe('wiring mistakes are refused, naming the option', () => {
  let metrics: OmniMetricsHandle;
  before(async () => {
    metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1, 2], logStats: true, prometheus: false, selfCheck: false });
  });
  after(() => metrics.shutdown());

  const refused = (config: Record<string, unknown>, option: string, message: string): void => {
    assert.throws(
      () => new OmniInstrumentation({ metrics, diagnosticsChannels: false, ...config }),
      (error: unknown) => error instanceof OmniOptionError && error.option === option && error.message === `omni-otel-metrics: ${message}`,
    );
  };

  it('an instance where the class goes', () => {
    refused(
      { orchestratorClass: new FakeOrchestrator() },
      'orchestratorClass',
      'orchestratorClass must be the class itself, not an instance: pass FakeOrchestrator, not new FakeOrchestrator()',
    );
    refused(
      { servingClass: new FakeServing(new FakeOrchestrator()) },
      'servingClass',
      'servingClass must be the class itself, not an instance: pass FakeServing, not new FakeServing()',
    );
  });

  it('something that is no class at all', () => {
    refused(
      { orchestratorClass: 'Orchestrator' },
      'orchestratorClass',
      'orchestratorClass must be the host\'s class (its prototype is patched); got the string "Orchestrator"',
    );
    refused({ servingClass: {} }, 'servingClass', "servingClass must be the host's class (its prototype is patched); got {}");
    refused(
      { orchestratorClass: () => undefined },
      'orchestratorClass',
      "orchestratorClass must be the host's class (its prototype is patched); got a function",
    );
  });

  it('a class with none of the host methods', () => {
    refused(
      { orchestratorClass: Unrelated },
      'orchestratorClass',
      'orchestratorClass Unrelated has none of the methods the hooks patch (addRequest, cleanupRequest, submitToStage, pollEngine, sendToNextStage, receiveFromPreviousStage, addReplica, removeReplica) on its prototype; pass the class that defines them (methods assigned in the constructor or as arrow-function fields cannot be patched)',
    );
    refused(
      { orchestratorClass: ArrowOrchestrator },
      'orchestratorClass',
      'orchestratorClass ArrowOrchestrator has none of the methods the hooks patch (addRequest, cleanupRequest, submitToStage, pollEngine, sendToNextStage, receiveFromPreviousStage, addReplica, removeReplica) on its prototype; pass the class that defines them (methods assigned in the constructor or as arrow-function fields cannot be patched)',
    );
    refused(
      { servingClass: FakeOrchestrator },
      'servingClass',
      'servingClass FakeOrchestrator has none of the methods the hooks patch (generate, abort, openRealtimeSession, closeRealtimeSession, appendRealtimeAudio) on its prototype; pass the class that defines them (methods assigned in the constructor or as arrow-function fields cannot be patched)',
    );
  });

  it('the right classes, and a subclass inheriting the methods, are accepted', () => {
    class Derived extends FakeOrchestrator {}
    for (const orchestratorClass of [FakeOrchestrator, Derived]) {
      const instrumentation = new OmniInstrumentation({ metrics, orchestratorClass, servingClass: FakeServing, diagnosticsChannels: false });
      instrumentation.disable();
    }
  });
});
