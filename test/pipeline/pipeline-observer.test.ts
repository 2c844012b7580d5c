import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { monotonicSeconds } from '../../instrumentation/stats/clock';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { sampleValue, seriesOf } from '../support/exposition';
import { FakeOrchestrator } from '../hooks/fake-host';
import { withWarnings } from '../views/store/store-fixture';

const TX = 'vllm:omni_transfer_tx_s';
const RUNNING = 'vllm:omni_num_requests_running';

describe('PipelineObserver: transfers and admissions', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation;
  beforeEach(async () => {
    metrics = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      selfCheck: false,
    });
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, diagnosticsChannels: false });
  });
  afterEach(async () => {
    instrumentation.disable();
    await metrics.shutdown();
  });

  const submit = (orchestrator: FakeOrchestrator, requestId: string, stageId: number, replicaId: number) =>
    orchestrator.submitToStage({ requestId, stageId, replicaId, arrivalTime: 1, promptTokenCount: 3 });

  it('a request released by the idle sweep forgets the replicas its transfers reported: a later request with its id goes by its own bindings', async () => {
    const orchestrator = new FakeOrchestrator();
    orchestrator.addRequest({ requestId: 'r' });
    submit(orchestrator, 'r', 0, 0);
    orchestrator.receiveFromPreviousStage('r'); // stage 1 received it on replica 1 (cached for the request)
    // Never cleaned up by the host: the sweep releases the admission, as a host that lost the request.
    withWarnings(() => instrumentation.observer.sweep(monotonicSeconds() + 3600));
    assert.deepEqual(instrumentation.observer.trackedRequests, { admitted: 0, generating: 0 });

    orchestrator.addRequest({ requestId: 'r' });
    submit(orchestrator, 'r', 0, 0);
    submit(orchestrator, 'r', 1, 0);
    orchestrator.sendToNextStage('r'); // no replicas in the receipt: the orchestrator's bindings say 0 → 0
    const tx = seriesOf(await metrics.metricsText(), `${TX}_count`);
    assert.deepEqual(tx, [{ model_name: 'm', from_stage: '0', from_replica: '0', to_stage: '1', to_replica: '0' }]);
  });

  it('two orchestrators each resolve a transfer with their own bindings', async () => {
    const a = new FakeOrchestrator();
    const b = new FakeOrchestrator();
    submit(a, 'ra', 0, 0);
    submit(a, 'ra', 1, 1);
    submit(b, 'rb', 0, 0);
    submit(b, 'rb', 1, 0);
    a.sendToNextStage('ra');
    b.sendToNextStage('rb');
    const tx = seriesOf(await metrics.metricsText(), `${TX}_count`);
    assert.deepEqual(tx.map((labels) => `${labels.from_replica}->${labels.to_replica}`).sort(), ['0->0', '0->1']);
  });

  it('running follows the admitted requests exactly, through duplicate admissions, repeated cleanups and the sweep', async () => {
    const orchestrator = new FakeOrchestrator();
    const running = async () => sampleValue(await metrics.metricsText(), RUNNING, { model_name: 'm' });
    orchestrator.addRequest({ requestId: 'a' });
    orchestrator.addRequest({ requestId: 'a' });
    orchestrator.addRequest({ requestId: 'b' });
    assert.equal(await running(), 2);
    orchestrator.cleanupRequest('a');
    orchestrator.cleanupRequest('a');
    assert.equal(await running(), 1);
    withWarnings(() => instrumentation.observer.sweep(monotonicSeconds() + 3600));
    assert.equal(await running(), 0);
    orchestrator.cleanupRequest('b');
    assert.equal(await running(), 0);
  });
});
