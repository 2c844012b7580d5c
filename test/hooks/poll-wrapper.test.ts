import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { EngineCoreOutputs } from '../../instrumentation/pipeline/host-contract';
import { hostCallCountsOf } from '../../instrumentation/self-check/host-calls';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import type { HostClass } from '../../instrumentation/hooks/class-patcher';
import type { OmniMetricsHandle } from '../../register';
import { sampleValue } from '../support/exposition';
import { quietHandle } from '../support/quiet-handle';

const WAITING = 'vllm:omni_stage_waiting_requests';
const STAGE_0 = { model_name: 'm', stage: '0' };

function polled(waiting: number): EngineCoreOutputs {
  return { timestamp: 1, outputs: [], schedulerStats: createSchedulerStats({ numWaitingReqs: waiting }) };
}

/** Runs `body` with `Orchestrator` instrumented for a fresh handle with these stage pools; everything stops after. */
async function instrumented<T extends HostClass>(Orchestrator: T, stagePools: number[], body: (handle: OmniMetricsHandle) => Promise<void>): Promise<void> {
  const handle = await quietHandle({ stagePools, logStats: true });
  const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
  try {
    await body(handle);
  } finally {
    instrumentation.disable();
    await handle.shutdown();
  }
}

async function stageWaiting(handle: OmniMetricsHandle): Promise<number | undefined> {
  return sampleValue(await handle.metricsText(), WAITING, STAGE_0);
}

describe('the wrapped pollEngine', () => {
  it('counts a poll before the host runs it: one that throws is counted, its error reaches the caller untouched, and nothing is observed', async () => {
    const boom = new Error('engine gone');
    class Orchestrator {
      readonly stagePools = [];
      fail = false;
      pollEngine(_stage: number, _replica: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
        if (this.fail) throw boom;
        return outputs;
      }
    }
    await instrumented(Orchestrator, [2], async (handle) => {
      const orchestrator = new Orchestrator();
      const outputs = polled(3);
      assert.equal(orchestrator.pollEngine(0, 1, outputs), outputs, 'the host value itself');
      orchestrator.fail = true;
      assert.throws(
        () => orchestrator.pollEngine(0, 1, polled(9)),
        (error: unknown) => error === boom,
      );
      const counts = hostCallCountsOf(handle);
      assert.equal(counts?.count('pollEngine'), 2);
      assert.equal(counts?.pollsOf(handle.stageReplicaMap.engineIndex(0, 1) as number), 2);
      assert.equal(await stageWaiting(handle), 3, 'the failed poll told nothing');
    });
  });

  it('a rejected async poll rejects with the host error, counted and not observed; a fulfilled one is observed', async () => {
    const boom = new Error('engine gone');
    class Orchestrator {
      readonly stagePools = [];
      async pollEngine(_stage: number, _replica: number, outputs: EngineCoreOutputs | undefined): Promise<EngineCoreOutputs> {
        await Promise.resolve();
        if (outputs === undefined) throw boom;
        return outputs;
      }
    }
    await instrumented(Orchestrator, [1], async (handle) => {
      const orchestrator = new Orchestrator();
      const outputs = polled(4);
      assert.equal(await orchestrator.pollEngine(0, 0, outputs), outputs);
      await assert.rejects(orchestrator.pollEngine(0, 0, undefined), (error: unknown) => error === boom);
      assert.equal(hostCallCountsOf(handle)?.count('pollEngine'), 2);
      assert.equal(await stageWaiting(handle), 4);
    });
  });

  it("the stage's waiting gauge follows every change of a replica's count, and a repeated count leaves it as it is", async () => {
    class Orchestrator {
      readonly stagePools = [];
      pollEngine(_stage: number, _replica: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
        return outputs;
      }
    }
    await instrumented(Orchestrator, [2], async (handle) => {
      const orchestrator = new Orchestrator();
      const seen: Array<number | undefined> = [];
      for (const [replica, waiting] of [
        [0, 2],
        [0, 2],
        [1, 5],
        [1, 5],
        [0, 0],
        [0, 0],
        [1, 1],
      ] as const) {
        orchestrator.pollEngine(0, replica, polled(waiting));
        seen.push(await stageWaiting(handle));
      }
      assert.deepEqual(seen, [2, 2, 7, 7, 5, 5, 1]);
      handle.removeReplica(0, 1);
      assert.equal(await stageWaiting(handle), 0, 'a replica that leaves takes its count with it');
    });
  });
});
