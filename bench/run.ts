/**
 * Overhead benchmarks, reported as ratios of contenders measured side by side in one process
 * (absolute times drift on shared machines). Run: `npm run bench`.
 */
import { OmniInstrumentation } from '../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics } from '../instrumentation/register';
import { OMNI_METER_NAME } from '../views/views';
import { FakeOrchestrator, FakeServing } from '../test/hooks/fake-host';
import { populateEveryFamily } from '../test/support/populate';
import { IterationStats } from '../instrumentation/stats/iteration-stats';
import { createRequestStateStats, createSchedulerStats } from '../instrumentation/stats/types';
import { compare, report } from './measure';

async function recordPath(): Promise<void> {
  const metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1, 2, 1], logStats: true, prometheus: false, logIntervalSeconds: 0 });
  const meter = metrics.meterProvider.getMeter(OMNI_METER_NAME);
  const histogram = meter.createHistogram('vllm.omni_transfer_tx_s');
  let i = 0;
  const results = await compare(
    [
      { name: 'empty loop body', op: () => void i++ },
      { name: 'transfer.observeTxTime (cached series, 5 labels)', op: () => metrics.transfer.observeTxTime(0, 0, 1, 1, 0.004) },
      {
        name: 'raw OTel histogram.record, new attributes object',
        op: () => histogram.record(0.004, { model_name: 'm', from_stage: '0', from_replica: '0', to_stage: '1', to_replica: '1' }),
      },
      { name: 'pipeline.requestSucceeded (counter + histogram)', op: () => metrics.pipeline.requestSucceeded(0.5, 'stop') },
    ],
    { iterations: 20_000 },
  );
  report('Record path (per call)', results, 'raw OTel histogram.record, new attributes object');
  await metrics.shutdown();
}

async function hookedRequest(): Promise<void> {
  const metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1, 2], logStats: true, prometheus: false, logIntervalSeconds: 0 });
  const plain = new FakeServing(new FakeOrchestrator());
  let id = 0;
  const drain = async (serving: FakeServing) => {
    for await (const _ of serving.generate({ requestId: `r${id++}`, chunks: 20 })) {
      // consume
    }
  };
  const plainResults = await compare([{ name: 'uninstrumented streamed request (20 audio chunks)', op: () => drain(plain) }], { iterations: 500 });
  const instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: FakeServing });
  const hooked = new FakeServing(new FakeOrchestrator());
  const hookedResults = await compare([{ name: 'instrumented streamed request (20 audio chunks)', op: () => drain(hooked) }], { iterations: 500 });
  instrumentation.disable();
  report('One streamed audio request through the serving hook', [...plainResults, ...hookedResults], 'uninstrumented streamed request (20 audio chunks)');
  await metrics.shutdown();
}

async function scrape(): Promise<void> {
  const sizes = [
    [1, 2, 1],
    [16, 16, 16],
  ];
  const measurements = [];
  for (const stagePools of sizes) {
    const metrics = await registerOmniMetrics({ modelName: 'm', stagePools, logStats: true, prometheus: false, logIntervalSeconds: 0 });
    populateEveryFamily(metrics);
    for (const [engine] of metrics.stageReplicaMap.entries()) {
      // Every upstream series of every replica: scheduler stats plus one finished request.
      const iteration = new IterationStats({ iterationTimestamp: 1000 });
      iteration.timeToFirstTokensIter.push(0.2);
      iteration.interTokenLatenciesIter.push(0.03);
      const request = createRequestStateStats({ arrivalTime: 999, queuedTs: 5, scheduledTs: 5.5, firstTokenTs: 6, lastTokenTs: 7, numGenerationTokens: 5 });
      iteration.updateFromFinishedRequest({ finishReason: 'stop', numPromptTokens: 12, maxTokensParam: 16 }, request);
      metrics.statLogger?.record(createSchedulerStats({ numRunningReqs: 2 }), iteration, engine);
    }
    const lines = (await metrics.metricsText()).split('\n').length - 1;
    const [result] = await compare([{ name: `full scrape, pools [${stagePools.join(',')}] (${lines} lines)`, op: () => metrics.metricsText().then(() => undefined) }], { iterations: 5, rounds: 5 });
    if (result) measurements.push(result);
    await metrics.shutdown();
  }
  report('Scrape (serialize the whole registry)', measurements, measurements[0]?.name ?? '');
}

async function main(): Promise<void> {
  await recordPath();
  await hookedRequest();
  await scrape();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
