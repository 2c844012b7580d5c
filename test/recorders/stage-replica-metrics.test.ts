import assert from 'node:assert/strict';
import { seriesOf } from '../support/exposition';
import { assertSample, register, stageLabels } from './harness';

const QUEUE = 'vllm:omni_stage_outputs_queue_size';
const INFLIGHT = 'vllm:omni_stage_inflight_requests';

describe('recorders: OmniStageReplicaMetrics (per-replica queue gauges)', () => {
  it('sets both gauges per (stage, replica); a later sample replaces the value', async () => {
    const handle = await register({ stagePools: [1, 2] });
    try {
      handle.stageReplica.observe([
        { stage: 0, replica: 0, outputsQueueSize: 3, inflight: 5 },
        { stage: 1, replica: 0, outputsQueueSize: 0, inflight: 2 },
        { stage: 1, replica: 1, outputsQueueSize: 7, inflight: 11 },
      ]);
      handle.stageReplica.observe([{ stage: '1', replica: '1', outputsQueueSize: 4, inflight: 1 }]);
      const text = await handle.metricsText();
      assertSample(text, QUEUE, stageLabels(0, 0), 3);
      assertSample(text, INFLIGHT, stageLabels(0, 0), 5);
      assertSample(text, QUEUE, stageLabels(1, 0), 0);
      assertSample(text, INFLIGHT, stageLabels(1, 0), 2);
      assertSample(text, QUEUE, stageLabels(1, 1), 4);
      assertSample(text, INFLIGHT, stageLabels(1, 1), 1);
      assert.equal(seriesOf(text, QUEUE).length, 3);
      assert.equal(seriesOf(text, INFLIGHT).length, 3);
    } finally {
      await handle.shutdown();
    }
  });

  it('accepts any iterable, and an empty one records nothing', async () => {
    const handle = await register({ stagePools: [2] });
    try {
      handle.stageReplica.observe([]);
      let text = await handle.metricsText();
      assert.deepEqual(seriesOf(text, QUEUE), []);
      function* samples() {
        yield { stage: 0, replica: 1, outputsQueueSize: 9, inflight: 8 };
      }
      handle.stageReplica.observe(samples());
      text = await handle.metricsText();
      assertSample(text, QUEUE, stageLabels(0, 1), 9);
      assertSample(text, INFLIGHT, stageLabels(0, 1), 8);
    } finally {
      await handle.shutdown();
    }
  });

  it('is not gated by logStats, as upstream', async () => {
    const handle = await register({ stagePools: [1], logStats: false });
    try {
      handle.stageReplica.observe([{ stage: 0, replica: 0, outputsQueueSize: 6, inflight: 2 }]);
      const text = await handle.metricsText();
      assertSample(text, QUEUE, stageLabels(0, 0), 6);
      assertSample(text, INFLIGHT, stageLabels(0, 0), 2);
    } finally {
      await handle.shutdown();
    }
  });
});
