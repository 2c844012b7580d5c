import assert from 'node:assert/strict';
import type { EngineCoreOutputs, StageRequest } from '../../instrumentation/pipeline/host-contract';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsHandle } from '../../register';
import { sampleValue, seriesOf } from '../support/exposition';
import { FakePool } from './fake-host';
import { quietHandle } from '../support/quiet-handle';

/** Every series the store holds, over all families. */
function seriesCount(metrics: OmniMetricsHandle): number {
  return metrics.store.families.reduce((total, family) => total + family.series.length, 0);
}

/** One LLM stage whose pool the host scales while serving. */
class ScalingOrchestrator {
  readonly stagePools = [new FakePool(2)];
  private nextReplica = 2;
  addRequest(request: { requestId: string }): void {
    void request;
  }
  cleanupRequest(requestId: string): void {
    void requestId;
  }
  submitToStage(request: StageRequest): void {
    this.stagePools[0]?.bindings.set(request.requestId, request.replicaId);
  }
  pollEngine(stageId: number, replicaId: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
    void stageId;
    void replicaId;
    return outputs;
  }
  async addReplica(stageId: number): Promise<number> {
    void stageId;
    return this.nextReplica++;
  }
  removeReplica(stageId: number, replicaId: number): void {
    void stageId;
    void replicaId;
  }
}

/** A request served start to finish by one replica: submitted, scheduled, one token, finished. */
function serve(orchestrator: ScalingOrchestrator, requestId: string, replica: number, now: number): void {
  orchestrator.submitToStage({ requestId, stageId: 0, replicaId: replica, arrivalTime: Date.now() / 1000, promptTokenCount: 4 });
  orchestrator.pollEngine(0, replica, {
    timestamp: now + 0.5,
    outputs: [
      {
        requestId,
        numNewTokens: 1,
        events: [
          { type: 'QUEUED', timestamp: now },
          { type: 'SCHEDULED', timestamp: now + 0.1 },
        ],
      },
    ],
  });
  orchestrator.pollEngine(0, replica, { timestamp: now + 1, outputs: [{ requestId, numNewTokens: 1, finishReason: 'stop' }] });
}

describe('hooks: a stage scaled up and down while serving', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation;
  beforeEach(async () => {
    metrics = await quietHandle({ stagePools: [2], logStats: true });
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: ScalingOrchestrator, diagnosticsChannels: false });
  });
  afterEach(async () => {
    instrumentation.disable();
    await metrics.shutdown();
  });

  it('exact totals per replica across scale-up, scale-down and a restart; no series left behind', async () => {
    const orchestrator = new ScalingOrchestrator();
    const success = async (replica: string): Promise<number | undefined> =>
      sampleValue(await metrics.metricsText(), 'vllm:request_success_total', { model_name: 'm', stage: '0', replica, finished_reason: 'stop' });
    let t = 100;
    for (let i = 0; i < 6; i++) serve(orchestrator, `a${i}`, i % 2, (t += 2));
    assert.equal(await orchestrator.addReplica(0), 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await success('2'), 0, 'the new replica is there at once, at zero');
    for (let i = 0; i < 9; i++) serve(orchestrator, `b${i}`, i % 3, (t += 2));
    assert.equal(await success('0'), 6);
    assert.equal(await success('1'), 6);
    assert.equal(await success('2'), 3);

    orchestrator.removeReplica(0, 1);
    assert.equal(await success('1'), undefined);
    for (let i = 0; i < 4; i++) serve(orchestrator, `c${i}`, i % 2 === 0 ? 0 : 2, (t += 2));
    assert.equal(await success('0'), 8);
    assert.equal(await success('2'), 5);
    const text = await metrics.metricsText();
    assert.deepEqual(
      seriesOf(text, 'vllm:num_requests_running').map((labels) => labels.replica),
      ['0', '2'],
    );
    assert.ok(!text.includes('replica="1"'), 'nothing of the removed replica is left');

    // A restart: remove then add with the same id; its counters start over.
    orchestrator.removeReplica(0, 2);
    metrics.addReplica(0, 2);
    assert.equal(await success('2'), 0);
    serve(orchestrator, 'd0', 2, t + 2);
    assert.equal(await success('2'), 1);
    assert.equal(await success('0'), 8);
  });

  it('per-replica engine statistics are released when a replica leaves: exact sizes, and the same series count over 3000 add \u2192 request \u2192 remove cycles', async () => {
    const orchestrator = new ScalingOrchestrator();
    let t = 100;
    let n = 0;
    const cycle = async (): Promise<void> => {
      const replica = await orchestrator.addReplica(0);
      const requestId = `churn${n++}`;
      serve(orchestrator, requestId, replica, (t += 2));
      // The fake host's own binding table, not the package's state.
      orchestrator.stagePools[0]?.bindings.delete(requestId);
      orchestrator.removeReplica(0, replica);
    };
    serve(orchestrator, 'a', 0, (t += 2));
    serve(orchestrator, 'b', 1, (t += 2));
    assert.equal(instrumentation.observer.trackedEngines, 2, 'one builder per replica that served');
    const replica = await orchestrator.addReplica(0);
    serve(orchestrator, 'c', replica, (t += 2));
    assert.equal(instrumentation.observer.trackedEngines, 3);
    orchestrator.removeReplica(0, replica);
    assert.equal(instrumentation.observer.trackedEngines, 2, 'the removed replica\u2019s builder is gone at once');
    for (let i = 0; i < 1000; i++) await cycle();
    assert.equal(instrumentation.observer.trackedEngines, 2);
    assert.deepEqual(metrics.stageReplicaMap.replicasPerStage, [2]);

    // What the cycles could leave behind is counted, not weighed: every series of the store, the
    // feed's builders and the replicas the map knows are what they were before them.
    const seriesBefore = seriesCount(metrics);
    for (let i = 0; i < 2000; i++) await cycle();
    assert.equal(seriesCount(metrics), seriesBefore);
    assert.equal(instrumentation.observer.trackedEngines, 2);
    assert.deepEqual(metrics.stageReplicaMap.replicasPerStage, [2]);
  });
});
