import assert from 'node:assert/strict';
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import { EngineRelabelProcessor } from '../../views/engine-relabel-processor';
import { StageReplicaMap } from '../../views/stage-replica-map';
import { parseSamples, sampleValue, seriesOf, type Sample } from '../support/exposition';
import { expectPrinted } from '../support/console-capture';
import { register } from './harness';

const M = { model_name: 'm' };
const of = (stage: string, replica: string) => ({ ...M, stage, replica });
/** The samples of one replica (engine families, per-replica pipeline families, hops to or from it). */
const replicaSamples = (text: string, stage: string, replica: string): Sample[] =>
  parseSamples(text).filter(
    ({ labels }) =>
      (labels.stage === stage && labels.replica === replica) ||
      (labels.from_stage === stage && labels.from_replica === replica) ||
      (labels.to_stage === stage && labels.to_replica === replica),
  );
const createdOf = (text: string, stage: string, replica: string): number | undefined => sampleValue(text, 'vllm:prompt_tokens_created', of(stage, replica));

describe('replicas added and removed while serving', () => {
  it('the map: new replicas take fresh engine indices, removed indices are never reused, bad input is refused', () => {
    const map = new StageReplicaMap([1, 2]);
    assert.deepEqual(map.addReplica(1), { engineIndex: 3, replica: 2 });
    assert.equal(map.removeReplica(1, 0), 1);
    assert.equal(map.removeReplica(1, 0), undefined);
    assert.deepEqual(map.addReplica(1, 0), { engineIndex: 4, replica: 0 });
    assert.deepEqual(map.replicasPerStage, [1, 3]);
    assert.deepEqual(map.replicasOf(1), [0, 1, 2]);
    assert.equal(map.lookup(1), undefined);
    assert.deepEqual(map.lookup(4), { stage: '1', replica: '0' });
    assert.deepEqual(
      map.entries().map(([engine, { stage, replica }]) => `${engine}:${stage}/${replica}`),
      ['0:0/0', '2:1/1', '3:1/2', '4:1/0'],
    );
    assert.throws(() => map.addReplica(2), /stage 2 is not one of the 2 stages/);
    assert.throws(() => map.addReplica(1, 2), /stage 1 already has replica 2/);
    assert.throws(() => map.addReplica(0, -1), /replica must be a non-negative integer; got -1/);
    assert.throws(() => map.addReplica(0, 1.5), /non-negative integer; got 1.5/);
    // A stage may be scaled to zero and back.
    map.removeReplica(0, 0);
    assert.deepEqual(map.addReplica(0), { engineIndex: 5, replica: 0 });
  });

  it('handle.engineIndex: the engine index of each replica as they come and go; anything else is undefined', async () => {
    const handle = await register({ stagePools: [1, 2] });
    try {
      assert.deepEqual([handle.engineIndex(0, 0), handle.engineIndex(1, 0), handle.engineIndex(1, 1)], [0, 1, 2]);
      assert.equal(handle.addReplica(1), 2);
      assert.equal(handle.engineIndex(1, 2), 3);
      assert.equal(handle.removeReplica(1, 0), true);
      assert.equal(handle.engineIndex(1, 0), undefined);
      handle.addReplica(1, 0);
      assert.equal(handle.engineIndex(1, 0), 4, 'a removed index is never reused');
      for (const [stage, replica] of [
        [2, 0],
        [0, 1],
        [-1, 0],
        [0.5, 0],
        [Number.NaN, 0],
        ['0', 0],
        [0, '0'],
        [null, 0],
      ] as const) {
        assert.equal(handle.engineIndex(stage as number, replica as number), undefined, `${String(stage)}, ${String(replica)}`);
      }
    } finally {
      await handle.shutdown();
    }
  });

  it('an added replica\u2019s vLLM series appear at once, at zero, created now, after the others; nothing else changes', async () => {
    const handle = await register({ stagePools: [1, 2], cacheConfig: { block_size: 16 } });
    try {
      const before = await handle.metricsText();
      const start = Date.now() / 1000;
      assert.equal(handle.addReplica(1), 2);
      const after = await handle.metricsText();
      const added = replicaSamples(after, '1', '2');
      const engineFamilies = handle.catalog.families.filter((f) => f.engineLabel && !f.info);
      assert.deepEqual(
        engineFamilies
          .filter((f) => seriesOf(after, f.type === 'histogram' ? `${f.name}_count` : f.name).every((l) => l.replica !== '2' || l.stage !== '1'))
          .map((f) => f.name),
        [],
        'every per-engine family has the new replica',
      );
      for (const sample of added.filter((s) => !s.name.endsWith('_created'))) {
        const expected =
          (sample.name === 'vllm:engine_sleep_state' && sample.labels.sleep_state === 'awake') || sample.name === 'vllm:cache_config_info' ? 1 : 0;
        assert.equal(sample.value, expected, `${sample.name}${JSON.stringify(sample.labels)}`);
      }
      assert.ok((createdOf(after, '1', '2') ?? 0) >= Math.floor(start));
      // The other replicas' lines are exactly as they were.
      for (const [stage, replica] of [
        ['0', '0'],
        ['1', '0'],
        ['1', '1'],
      ] as const) {
        assert.deepEqual(replicaSamples(after, stage, replica), replicaSamples(before, stage, replica));
      }
      // Within a family the new replica's series come after the existing ones, as a new vLLM engine's would.
      assert.deepEqual(seriesOf(after, 'vllm:num_requests_running'), [of('0', '0'), of('1', '0'), of('1', '1'), of('1', '2')]);
    } finally {
      await handle.shutdown();
    }
  });

  it('a removed replica\u2019s series leave the next scrape and the next export, hops included; others are untouched', async () => {
    const handle = await register({ stagePools: [1, 2] });
    try {
      const producer = handle.createMetricProducer();
      handle.stageReplica.observe([
        { stage: 1, replica: 1, inflight: 2, outputsQueueSize: 1 },
        { stage: 1, replica: 0, inflight: 1, outputsQueueSize: 0 },
      ]);
      handle.audio.observeAudioTtfp(1, 1, 0.2);
      handle.transfer.observeTxTime(0, 0, 1, 1, 0.01);
      handle.transfer.observeTxTime(0, 0, 1, 0, 0.02);
      handle.statLogger?.record(createSchedulerStats({ numRunningReqs: 4 }), undefined, 2);
      const before = await handle.metricsText();
      assert.ok(replicaSamples(before, '1', '1').length > 100);
      assert.equal(handle.removeReplica(1, 1), true);
      assert.equal(handle.removeReplica(1, 1), false);
      const after = await handle.metricsText();
      assert.deepEqual(replicaSamples(after, '1', '1'), []);
      const untouched = (text: string, stage: string, replica: string): Sample[] =>
        replicaSamples(text, stage, replica).filter(({ labels }) => labels.to_replica !== '1' || labels.to_stage !== '1');
      for (const [stage, replica] of [
        ['0', '0'],
        ['1', '0'],
      ] as const) {
        assert.deepEqual(untouched(after, stage, replica), untouched(before, stage, replica));
      }
      const { resourceMetrics } = await producer.collect();
      const exported = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.flatMap((metric) => metric.dataPoints.map((point) => point.attributes)));
      assert.ok(exported.length >= 100, `only ${exported.length} points exported`);
      assert.deepEqual(
        exported.filter((a) => (a.stage === '1' && a.replica === '1') || a.to_replica === '1'),
        [],
        'nothing of the replica in the export',
      );
      // A late poll of the removed engine records nothing visible, and says so once.
      await expectPrinted(['omni-otel-metrics: engine index 2 is not in the stage/replica map; its stats are dropped'], () =>
        handle.statLogger?.record(createSchedulerStats({ numRunningReqs: 9 }), undefined, 2),
      );
      handle.stageReplica.observe([{ stage: 1, replica: 0, inflight: 5, outputsQueueSize: 0 }]);
      const late = await handle.metricsText();
      assert.deepEqual(replicaSamples(late, '1', '1'), []);
      assert.equal(sampleValue(late, 'vllm:omni_stage_inflight_requests', of('1', '0')), 5);
    } finally {
      await handle.shutdown();
    }
  });

  it('a replaced replica\u2019s counters start from zero with a new _created; a later record binds the new series', async () => {
    const handle = await register({ stagePools: [2] });
    try {
      const iteration = new IterationStats();
      iteration.numGenerationTokens = 30;
      handle.statLogger?.record(undefined, iteration, 1);
      handle.stageReplica.observe([{ stage: 0, replica: 1, inflight: 3, outputsQueueSize: 0 }]);
      const before = await handle.metricsText();
      assert.equal(sampleValue(before, 'vllm:generation_tokens_total', of('0', '1')), 30);
      const createdBefore = createdOf(before, '0', '1') ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 5));
      handle.replaceReplica(0, 1);
      assert.throws(() => handle.replaceReplica(0, 7), /stage 0 has no replica 7 to replace/);
      const after = await handle.metricsText();
      assert.equal(sampleValue(after, 'vllm:generation_tokens_total', of('0', '1')), 0);
      assert.ok((createdOf(after, '0', '1') ?? 0) > createdBefore, 'a new _created');
      assert.equal(sampleValue(after, 'vllm:omni_stage_inflight_requests', of('0', '1')), undefined);
      assert.equal(sampleValue(after, 'vllm:prompt_tokens_total', of('0', '0')), 0);
      // The restarted replica has a new engine index; the stat logger records on it.
      const engine = handle.stageReplicaMap.engineIndex(0, 1) as number;
      assert.equal(engine, 2);
      handle.statLogger?.record(undefined, iteration, engine);
      handle.stageReplica.observe([{ stage: 0, replica: 1, inflight: 1, outputsQueueSize: 0 }]);
      const later = await handle.metricsText();
      assert.equal(sampleValue(later, 'vllm:generation_tokens_total', of('0', '1')), 30);
      assert.equal(sampleValue(later, 'vllm:omni_stage_inflight_requests', of('0', '1')), 1);
    } finally {
      await handle.shutdown();
    }
  });

  it('stage_waiting_requests drops a removed replica\u2019s snapshot at once', async () => {
    const handle = await register({ stagePools: [1, 2] });
    try {
      handle.stageService.setReplicaWaiting(1, 0, 3);
      handle.stageService.setReplicaWaiting(1, 1, 5);
      assert.equal(sampleValue(await handle.metricsText(), 'vllm:omni_stage_waiting_requests', { ...M, stage: '1' }), 8);
      handle.removeReplica(1, 1);
      assert.equal(sampleValue(await handle.metricsText(), 'vllm:omni_stage_waiting_requests', { ...M, stage: '1' }), 3);
    } finally {
      await handle.shutdown();
    }
  });

  it('periodic log lines follow the replicas', async () => {
    const lines: string[] = [];
    const sink = { info: (line: string) => lines.push(line), debug: (line: string) => lines.push(line) };
    const handle = await register({ stagePools: [1, 1], logIntervalSeconds: 0.05, logSink: sink });
    try {
      handle.addReplica(1);
      handle.removeReplica(0, 0);
      lines.length = 0;
      await new Promise((resolve) => setTimeout(resolve, 180));
      const engines = new Set(lines.map((line) => /^Stage (\d+) replica (\d+):/.exec(line)?.slice(1).join('/')));
      assert.ok(lines.length > 0, 'log lines were written');
      assert.ok(!engines.has('0/0'), `the removed replica is not logged: ${[...engines].join(', ')}`);
      assert.ok(engines.has('1/1'), `the added replica is logged: ${[...engines].join(', ')}`);
    } finally {
      await handle.shutdown();
    }
  });

  it('the relabel processor maps a removed engine index to stage="unknown", an added one to its replica', () => {
    const map = new StageReplicaMap([1, 1]);
    const processor = new EngineRelabelProcessor(map);
    const engine1 = { model_name: 'm', engine: '1' };
    assert.deepEqual(processor.process(engine1), { model_name: 'm', stage: '1', replica: '0' });
    map.removeReplica(1, 0);
    map.addReplica(1, 0);
    const warnings: string[] = [];
    const logger: DiagLogger = {
      error: () => undefined,
      warn: (m: string) => warnings.push(m),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    };
    diag.setLogger(logger, DiagLogLevel.WARN);
    try {
      assert.deepEqual(processor.process(engine1), { model_name: 'm', stage: 'unknown', replica: '1' });
      assert.deepEqual(processor.process({ model_name: 'm', engine: '2' }), { model_name: 'm', stage: '1', replica: '0' });
    } finally {
      diag.disable();
    }
    assert.equal(warnings.length, 1);
  });
});
