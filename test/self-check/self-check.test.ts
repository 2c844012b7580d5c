import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import type { SelfCheckReport, SilentFamily } from '../../instrumentation/self-check/types';
import type { OmniRequestOutput } from '../../instrumentation/pipeline/host-contract';
import { createSchedulerStats } from '../../instrumentation/stats/types';
import { expectPrinted } from '../support/console-capture';
import { drain, FullOrchestrator, OrchestratorWithoutTransfers, SelfCheckServing, TextOnlyServing } from './self-check-host';

const TRANSFER_SOURCE = {
  tx: 'sendToNextStage: the TransferReceipt sendToNextStage returns',
  rx: 'receiveFromPreviousStage: the ReceiveReceipt receiveFromPreviousStage returns',
};
const notCalled = (name: string, method: 'sendToNextStage' | 'receiveFromPreviousStage'): SilentFamily => ({
  name,
  reason: 'host-method-not-called',
  source: method === 'sendToNextStage' ? TRANSFER_SOURCE.tx : TRANSFER_SOURCE.rx,
  detail: `the hooks are attached but ${method} was never called (nor its diagnostics channel published): the host class has no ${method}, or never calls it, or a ${method} bound or copied before the hooks were attached (\`const ${method} = host.${method}.bind(host)\`, a destructured method) calls the original, which the hooks never see: create the OmniInstrumentation before the host binds its methods`,
  method,
  silentChecks: 1,
});
const LOG_STATS_OFF = "logStats is off, so the pipeline recorders drop every observation (vLLM-Omni's log_stats gating): set logStats: true";

/** The report without its wall-clock time. */
const body = (report: SelfCheckReport): Omit<SelfCheckReport, 'checkedAt'> => {
  const { checkedAt, ...rest } = report;
  assert.equal(typeof checkedAt, 'number');
  return rest;
};

describe('self-check: families that stay silent', () => {
  let metrics: OmniMetricsHandle | undefined;
  let instrumentation: OmniInstrumentation | undefined;

  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await metrics?.shutdown();
    metrics = undefined;
  });

  const register = async (options: Partial<OmniMetricsOptions> = {}): Promise<OmniMetricsHandle> => {
    metrics = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      prometheus: false,
      logIntervalSeconds: 0,
      selfCheck: false,
      ...options,
    });
    return metrics;
  };
  const instrument = (handle: OmniMetricsHandle, orchestratorClass: typeof OrchestratorWithoutTransfers): void => {
    instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass, servingClass: SelfCheckServing, diagnosticsChannels: false });
  };

  it('stays quiet when every host method is called and every replica polled', async () => {
    const handle = await register();
    instrument(handle, FullOrchestrator);
    const serving = new SelfCheckServing(new FullOrchestrator());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 1);
    assert.deepEqual(body(handle.selfCheck()), { requestsObserved: 2, requestsFlowed: true, hooksAttached: true, silent: [], unpolledReplicas: [] });
    // No requests since: nothing flowed, nothing to report.
    assert.deepEqual(body(handle.selfCheck()), { requestsObserved: 2, requestsFlowed: false, hooksAttached: true, silent: [], unpolledReplicas: [] });
  });

  it('reports nothing before any request, even though every family is still empty', async () => {
    const handle = await register();
    instrument(handle, OrchestratorWithoutTransfers);
    assert.deepEqual(body(handle.selfCheck()), { requestsObserved: 0, requestsFlowed: false, hooksAttached: true, silent: [], unpolledReplicas: [] });
  });

  it('stays quiet about transfers and later stages when text-only requests never leave the first stage', async () => {
    const handle = await register();
    instrumentation = new OmniInstrumentation({
      metrics: handle,
      orchestratorClass: OrchestratorWithoutTransfers,
      servingClass: TextOnlyServing,
      diagnosticsChannels: false,
    });
    const serving = new TextOnlyServing(new OrchestratorWithoutTransfers());
    for (const id of ['a', 'b']) for await (const _ of serving.generate({ requestId: id }));
    assert.deepEqual(body(handle.selfCheck()), { requestsObserved: 2, requestsFlowed: true, hooksAttached: true, silent: [], unpolledReplicas: [] });
  });

  it('stays quiet about engine families on a one-stage host with no stagePools and no stage submissions', async () => {
    const handle = await register({ stagePools: undefined });
    class Orchestrator {
      addRequest(_request: { requestId: string }): void {}
      cleanupRequest(_requestId: string): void {}
    }
    class Serving {
      async *generate(request: { requestId: string }): AsyncGenerator<OmniRequestOutput> {
        const orchestrator = new Orchestrator();
        orchestrator.addRequest(request);
        yield {
          requestId: request.requestId,
          stageId: 0,
          replicaId: 0,
          finalOutputType: 'text',
          finished: true,
          finishReason: 'stop',
          text: 'Hi',
          stageMetrics: [{ stageId: 0, numTokensIn: 12, numTokensOut: 5, stageGenTimeMs: 40 }],
        };
        orchestrator.cleanupRequest(request.requestId);
      }
    }
    instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, servingClass: Serving, diagnosticsChannels: false });
    for await (const _ of new Serving().generate({ requestId: 'r1' }));
    assert.deepEqual(body(handle.selfCheck()), { requestsObserved: 1, requestsFlowed: true, hooksAttached: true, silent: [], unpolledReplicas: [] });
  });

  it('names a generate bound before the hooks were attached as the cause when addRequest is seen and generate is not', async () => {
    const handle = await register();
    const serving = new SelfCheckServing(new FullOrchestrator());
    // Bound before the instrumentation exists: the hooks patch the prototype, this keeps the original.
    const generate = serving.generate.bind(serving);
    instrument(handle, FullOrchestrator);
    for (const requestId of ['a', 'b']) for await (const _ of generate({ requestId, replica: 0 }));
    const e2e = handle.selfCheck().silent.find((entry) => entry.name === 'vllm:omni_e2e_request_latency_s');
    assert.deepEqual(e2e && { reason: e2e.reason, method: e2e.method, detail: e2e.detail }, {
      reason: 'host-method-not-called',
      method: 'generate',
      detail:
        'the hooks are attached but generate was never called through them while addRequest was (×2): a generate bound or copied before the hooks were attached (`const generate = host.generate.bind(host)`, a destructured method) calls the original, which the hooks never see: create the OmniInstrumentation before the host binds its methods',
    });
  });

  it('flags the transfer families when the orchestrator has no sendToNextStage / receiveFromPreviousStage', async () => {
    const handle = await register();
    instrument(handle, OrchestratorWithoutTransfers);
    const serving = new SelfCheckServing(new OrchestratorWithoutTransfers());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 1);
    const first = handle.selfCheck();
    assert.deepEqual(body(first), {
      requestsObserved: 2,
      requestsFlowed: true,
      hooksAttached: true,
      silent: [
        notCalled('vllm:omni_transfer_size_bytes', 'sendToNextStage'),
        notCalled('vllm:omni_transfer_tx_s', 'sendToNextStage'),
        notCalled('vllm:omni_transfer_rx_s', 'receiveFromPreviousStage'),
        notCalled('vllm:omni_transfer_in_flight_s', 'receiveFromPreviousStage'),
      ],
      unpolledReplicas: [],
    });
    // More requests, still no transfers: the count of silent checks grows.
    await drain(serving, 'c', 0);
    assert.deepEqual(
      handle.selfCheck().silent.map((entry) => [entry.name, entry.silentChecks]),
      [
        ['vllm:omni_transfer_size_bytes', 2],
        ['vllm:omni_transfer_tx_s', 2],
        ['vllm:omni_transfer_rx_s', 2],
        ['vllm:omni_transfer_in_flight_s', 2],
      ],
    );
  });

  it('gives logStats off as the reason for every pipeline family that needs it', async () => {
    const handle = await register({ logStats: false });
    await expectPrinted([/^omni-otel-metrics: OmniInstrumentation hooks attached to a handle registered with logStats off: /], () =>
      instrument(handle, FullOrchestrator),
    );
    await drain(new SelfCheckServing(new FullOrchestrator()), 'a', 0);
    const report = handle.selfCheck();
    assert.deepEqual(
      report.silent.map((entry) => entry.name),
      [
        'vllm:omni_requests_success_total',
        'vllm:omni_e2e_request_latency_s',
        'vllm:omni_transfer_size_bytes',
        'vllm:omni_transfer_tx_s',
        'vllm:omni_transfer_rx_s',
        'vllm:omni_transfer_in_flight_s',
        'vllm:omni_prompt_tokens_total',
        'vllm:omni_generation_tokens_total',
        'vllm:omni_stage_gen_time_s',
        'vllm:omni_request_queue_wait_s',
      ],
    );
    assert.ok(report.silent.every((entry) => entry.reason === 'log-stats-off' && entry.detail === LOG_STATS_OFF && entry.silentChecks === 1));
    assert.equal(report.requestsObserved, 1, 'requests are seen through the hooks even though the pipeline counters stay at 0');
    assert.deepEqual(report.silent[0], {
      name: 'vllm:omni_requests_success_total',
      reason: 'log-stats-off',
      source: 'generate: the finished output of generate (abort: a stream that ends without it)',
      detail: LOG_STATS_OFF,
      silentChecks: 1,
    });
  });

  it('names a replica that was never polled, and the families that lack its data', async () => {
    const handle = await register();
    instrument(handle, FullOrchestrator);
    const serving = new SelfCheckServing(new FullOrchestrator());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 0);
    const report = handle.selfCheck();
    assert.deepEqual(report.unpolledReplicas, [{ stage: '1', replica: '1' }]);
    const names = report.silent.map((entry) => entry.name);
    assert.deepEqual(names, [
      'vllm:prompt_tokens_total',
      'vllm:prompt_tokens_by_source_total',
      'vllm:generation_tokens_total',
      'vllm:request_success_total',
      'vllm:request_prompt_tokens',
      'vllm:request_generation_tokens',
      'vllm:iteration_tokens_total',
      'vllm:request_max_num_generation_tokens',
      'vllm:request_params_n',
      'vllm:request_prefill_kv_computed_tokens',
      'vllm:request_num_preemptions',
      'vllm:time_to_first_token_seconds',
      'vllm:request_time_per_output_token_seconds',
      'vllm:e2e_request_latency_seconds',
      'vllm:request_queue_time_seconds',
      'vllm:request_inference_time_seconds',
      'vllm:request_prefill_time_seconds',
      'vllm:request_decode_time_seconds',
    ]);
    const [first] = report.silent;
    assert.deepEqual(first, {
      name: 'vllm:prompt_tokens_total',
      reason: 'replica-not-polled',
      source: 'submitToStage + pollEngine: engine-core outputs of pollEngine (per-request events and tokens, after submitToStage)',
      detail:
        'no data from stage 1 replica 1: never polled while requests flowed (pollEngine(stage, replica) never called for it, or its polls carried no statistics)',
      silentChecks: 1,
      lastObservedAt: report.checkedAt,
      replicas: [{ stage: '1', replica: '1' }],
    });
    // Once the replica is polled through the hooks, it is no longer reported.
    await new FullOrchestrator().pollEngine(1, 1, 'idle', 0);
    const after = handle.selfCheck();
    assert.deepEqual(after.unpolledReplicas, []);
    assert.deepEqual(after.silent, []);
  });

  it('a replica pulled from its own vLLM server (enginePull) is not reported unpolled, nor are its vLLM families', async () => {
    // Nothing scrapes in this test, so the loopback URL is never fetched.
    const handle = await register({ enginePull: { engines: [{ stage: 1, replica: 1, url: 'http://127.0.0.1:9/metrics' }] } });
    instrument(handle, FullOrchestrator);
    const serving = new SelfCheckServing(new FullOrchestrator());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 0);
    assert.deepEqual(body(handle.selfCheck()), { requestsObserved: 2, requestsFlowed: true, hooksAttached: true, silent: [], unpolledReplicas: [] });
  });

  it('without hooks, says nothing reached the recorder and where the data comes from', async () => {
    const handle = await register();
    // The host feeds the recorders itself: requests succeed through two stages, tokens are counted, no engine stats and no transfers.
    handle.pipeline.requestSucceeded(0.5, 'stop');
    handle.pipeline.observeTokens(3, 4);
    handle.stageService.observeStageGenTime(0, 'llm', 0.1);
    handle.stageService.observeStageGenTime(1, 'llm', 0.2);
    handle.stageService.observeQueueWait(0.01);
    const report = handle.selfCheck();
    assert.equal(report.hooksAttached, false);
    assert.equal(report.requestsObserved, 1);
    const transfer = report.silent.find((entry) => entry.name === 'vllm:omni_transfer_tx_s');
    assert.deepEqual(transfer, {
      name: 'vllm:omni_transfer_tx_s',
      reason: 'no-data-from-source',
      source: TRANSFER_SOURCE.tx,
      detail: 'nothing reached its recorder and no OmniInstrumentation hooks feed this handle: it comes from the TransferReceipt sendToNextStage returns',
      silentChecks: 1,
    });
    assert.deepEqual(report.unpolledReplicas, [
      { stage: '0', replica: '0' },
      { stage: '1', replica: '0' },
      { stage: '1', replica: '1' },
    ]);
    assert.deepEqual(
      report.silent.filter((entry) => entry.name.startsWith('vllm:omni_')).map((entry) => entry.name),
      ['vllm:omni_transfer_size_bytes', 'vllm:omni_transfer_tx_s', 'vllm:omni_transfer_rx_s', 'vllm:omni_transfer_in_flight_s'],
    );
  });

  it('counts hooked pollEngine calls and engine statistics fed by hand alike as a polled replica', async () => {
    const handle = await register({ stagePools: [1] });
    handle.pipeline.requestSucceeded(0.5, 'stop');
    handle.statLogger?.record(createSchedulerStats({ numRunningReqs: 2, kvCacheUsage: 0.25 }), undefined, 0);
    assert.deepEqual(handle.selfCheck().unpolledReplicas, []);
  });

  it('reports audio families only once the pipeline has produced audio, then each one that stays empty', async () => {
    const handle = await register({ stagePools: [1] });
    handle.pipeline.requestSucceeded(0.5, 'stop');
    handle.pipeline.observeTokens(3, 4);
    handle.stageService.observeStageGenTime(0, 'llm', 0.1);
    handle.stageService.observeQueueWait(0.01);
    const textOnly = handle.selfCheck();
    assert.deepEqual(
      textOnly.silent.filter((entry) => entry.name.startsWith('vllm:omni_')),
      [],
    );
    // Frames arrive (finalize), but no streaming TTFP / underrun: those two are reported.
    handle.pipeline.requestSucceeded(0.5, 'stop');
    handle.pipeline.observeTokens(3, 4);
    handle.stageService.observeStageGenTime(0, 'llm', 0.1);
    handle.stageService.observeQueueWait(0.01);
    handle.audio.observeModalityAtFinalize({
      outputType: 'audio',
      stageId: 0,
      replicaId: 0,
      stageMetrics: { stageGenTimeMs: 100, audioGeneratedFrames: 24000 },
      multimodalOutput: {},
    });
    assert.deepEqual(
      handle
        .selfCheck()
        .silent.filter((entry) => entry.name.startsWith('vllm:omni_'))
        .map((entry) => [entry.name, entry.reason]),
      [
        ['vllm:omni_audio_ttfp_s', 'no-data-from-source'],
        ['vllm:omni_audio_underrun_s', 'no-data-from-source'],
      ],
    );
  });
});
