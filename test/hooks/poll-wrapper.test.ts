import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { EngineCoreOutputs } from '../../instrumentation/pipeline/host-contract';
import { hostCallCountsOf } from '../../instrumentation/self-check/host-calls';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import { quietHandle } from '../support/quiet-handle';

const WAITING = 'vllm:omni_stage_waiting_requests{model_name="m",stage="0"}';

function polled(waiting: number): EngineCoreOutputs {
  return { timestamp: 1, outputs: [], schedulerStats: createSchedulerStats({ numWaitingReqs: waiting }) };
}

/** The value of one sample line of the text exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
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
    const handle = await quietHandle({ stagePools: [2], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
    try {
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
      assert.equal(sample(await handle.metricsText(), WAITING), 3, 'the failed poll told nothing');
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
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
    const handle = await quietHandle({ stagePools: [1], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
    try {
      const orchestrator = new Orchestrator();
      const outputs = polled(4);
      assert.equal(await orchestrator.pollEngine(0, 0, outputs), outputs);
      await assert.rejects(orchestrator.pollEngine(0, 0, undefined), (error: unknown) => error === boom);
      assert.equal(hostCallCountsOf(handle)?.count('pollEngine'), 2);
      assert.equal(sample(await handle.metricsText(), WAITING), 4);
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });

  it("the stage's waiting gauge follows every change of a replica's count, and a repeated count leaves it as it is", async () => {
    class Orchestrator {
      readonly stagePools = [];
      pollEngine(_stage: number, _replica: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
        return outputs;
      }
    }
    const handle = await quietHandle({ stagePools: [2], logStats: true });
    const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
    try {
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
        seen.push(sample(await handle.metricsText(), WAITING));
      }
      assert.deepEqual(seen, [2, 2, 7, 7, 5, 5, 1]);
      handle.removeReplica(0, 1);
      assert.equal(sample(await handle.metricsText(), WAITING), 0, 'a replica that leaves takes its count with it');
    } finally {
      instrumentation.disable();
      await handle.shutdown();
    }
  });
});
