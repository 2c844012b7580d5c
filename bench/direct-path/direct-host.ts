import { performance } from 'node:perf_hooks';
import type { EngineCoreOutputs, OmniRequestOutput, ReceiveReceipt, StageRequest, TransferReceipt } from '../../index';
import { createBenchHost } from '../bench-host';
import type { CellFactory } from './cells';
import { bindEngineCells, bindPipelineCells, type EngineCells } from './engine-cells';

/** vLLM's per-request statistics on one stage (RequestStateStats), plus what the request asked for. */
interface StageRequestState {
  readonly cells: EngineCells;
  readonly arrivalTime: number;
  readonly promptTokens: number;
  readonly maxTokens: number;
  generated: number;
  queuedTs: number;
  scheduledTs: number;
  firstTokenTs: number;
  lastTokenTs: number;
}

/**
 * The bench host with its methods recording by hand, straight into bound cells: the same vLLM and
 * pipeline samples the package's hooks produce for this workload, with no generic machinery — a
 * true floor for what recording them must cost (with `floatCells`), or prom-client written by hand
 * (with `promClientCells`).
 */
export function createDirectHost(cells: CellFactory, pools: readonly number[]) {
  const host = createBenchHost();
  const engines = pools.map((count, stage) => Array.from({ length: count }, (_, replica) => bindEngineCells(cells, stage, replica)));
  const pipeline = bindPipelineCells(cells, pools);
  const stages = new Map<string, StageRequestState[]>();
  const replicas = new Map<string, number[]>();
  const generateStart = new Map<string, number>();

  class Orchestrator extends host.Orchestrator {
    override submitToStage(request: StageRequest): void {
      let perStage = stages.get(request.requestId);
      if (perStage === undefined) {
        perStage = [];
        stages.set(request.requestId, perStage);
        replicas.set(request.requestId, []);
        const start = generateStart.get(request.requestId);
        if (start !== undefined) pipeline.queueWait.observe((performance.now() - start) / 1000);
      }
      const cells = engines[request.stageId]?.[request.replicaId];
      if (cells !== undefined) {
        perStage[request.stageId] = {
          cells,
          arrivalTime: request.arrivalTime ?? 0,
          promptTokens: request.promptTokenCount ?? 0,
          maxTokens: request.maxTokens ?? 0,
          generated: 0,
          queuedTs: 0,
          scheduledTs: 0,
          firstTokenTs: 0,
          lastTokenTs: 0,
        };
        (replicas.get(request.requestId) as number[])[request.stageId] = request.replicaId;
      }
      super.submitToStage(request);
    }

    override pollEngine(stageId: number, replicaId: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
      const engine = engines[stageId]?.[replicaId];
      if (engine !== undefined) recordIteration(engine, stageId, outputs);
      return super.pollEngine(stageId, replicaId, outputs);
    }

    override receiveFromPreviousStage(receipt: ReceiveReceipt): ReceiveReceipt {
      const from = receipt.stageId - 1;
      const fromReplica = replicas.get(receipt.requestId)?.[from];
      const rx = fromReplica === undefined ? undefined : pipeline.transferRx[from]?.[fromReplica]?.[receipt.replicaId];
      const inFlight = fromReplica === undefined ? undefined : pipeline.transferInFlight[from]?.[fromReplica]?.[receipt.replicaId];
      if (receipt.rxDecodeTimeMs !== undefined) rx?.observe(receipt.rxDecodeTimeMs / 1000);
      if (receipt.inFlightTimeMs !== undefined) inFlight?.observe(receipt.inFlightTimeMs / 1000);
      return super.receiveFromPreviousStage(receipt);
    }

    override sendToNextStage(receipt: TransferReceipt): TransferReceipt {
      return super.sendToNextStage(receipt);
    }

    override cleanupRequest(requestId: string): void {
      stages.delete(requestId);
      replicas.delete(requestId);
      generateStart.delete(requestId);
      super.cleanupRequest(requestId);
    }
  }

  function recordIteration(engine: EngineCells, stageId: number, outputs: EngineCoreOutputs): void {
    // Read when a TTFT or an e2e latency first needs it, as the package does: a decode step reads no clock.
    let iterationTimestamp: number | undefined;
    const engineTs = outputs.timestamp ?? 0;
    const scheduler = outputs.schedulerStats;
    if (scheduler !== undefined && scheduler !== null) {
      engine.running.set(scheduler.numRunningReqs);
      engine.waiting.set(scheduler.numWaitingReqs);
      engine.kvCacheUsage.set(scheduler.kvCacheUsage);
      pipeline.stageWaiting[stageId]?.set(scheduler.numWaitingReqs);
    }
    let iterationTokens = 0;
    for (const output of outputs.outputs) {
      const state = stages.get(output.requestId)?.[stageId];
      if (state === undefined) continue;
      const cells = state.cells;
      const tokens = output.numNewTokens ?? 0;
      iterationTokens += tokens;
      cells.generationTokens.inc(tokens);
      for (const event of output.events ?? []) {
        if (event.type === 'QUEUED') state.queuedTs = event.timestamp;
        else if (event.type === 'SCHEDULED' && state.scheduledTs === 0) state.scheduledTs = event.timestamp;
      }
      if (state.generated === 0) {
        const cached = output.numCachedTokens ?? 0;
        iterationTokens += state.promptTokens - cached;
        cells.promptTokens.inc(state.promptTokens);
        cells.promptComputed.inc(state.promptTokens - cached);
        cells.promptCacheHit.inc(cached);
        cells.promptCached.inc(cached);
        cells.prefillKvComputed.observe(state.promptTokens - cached);
        iterationTimestamp ??= Date.now() / 1000;
        cells.timeToFirstToken.observe(iterationTimestamp - state.arrivalTime);
        state.firstTokenTs = engineTs;
      } else {
        cells.interTokenLatency.observe(engineTs - state.lastTokenTs);
      }
      state.generated += tokens;
      state.lastTokenTs = engineTs;
      if (output.finishReason === 'length') finishStage(state, (iterationTimestamp ??= Date.now() / 1000));
    }
    engine.iterationTokens.observe(iterationTokens);
  }

  function finishStage(state: StageRequestState, iterationTimestamp: number): void {
    const cells = state.cells;
    const decode = state.lastTokenTs - state.firstTokenTs;
    cells.successLength.inc(1);
    cells.e2eLatency.observe(iterationTimestamp - state.arrivalTime);
    cells.queueTime.observe(state.scheduledTs - state.queuedTs);
    cells.prefillTime.observe(state.firstTokenTs - state.scheduledTs);
    cells.decodeTime.observe(decode);
    cells.inferenceTime.observe(state.lastTokenTs - state.scheduledTs);
    cells.timePerOutputToken.observe(state.generated > 1 ? decode / (state.generated - 1) : 0);
    cells.promptTokensPerRequest.observe(state.promptTokens);
    cells.generationTokensPerRequest.observe(state.generated);
    cells.maxGenerationTokens.observe(state.generated);
    cells.paramsN.observe(1);
    cells.paramsMaxTokens.observe(state.maxTokens);
    cells.preemptions.observe(0);
  }

  class Serving extends host.Serving {
    override async *generate(request: { requestId: string; stageId: number; replicaId: number }): AsyncGenerator<OmniRequestOutput> {
      const start = performance.now();
      generateStart.set(request.requestId, start);
      const audio = pipeline.audio[request.replicaId];
      let frames = 0;
      for await (const output of super.generate(request)) {
        const chunk = output.multimodalOutput as { audio?: Int16Array; sample_rate?: number } | undefined;
        const samples = chunk?.audio?.length ?? 0;
        if (frames === 0 && samples > 0) audio?.ttfp.observe((performance.now() - start) / 1000);
        frames += samples;
        if (output.finished) {
          const sampleRate = chunk?.sample_rate ?? 24000;
          const metrics = output.stageMetrics?.[0];
          const duration = frames / sampleRate;
          pipeline.successStop.inc(1);
          pipeline.e2eLatency.observe((performance.now() - start) / 1000);
          audio?.duration.observe(duration);
          audio?.frames.inc(frames);
          audio?.underrun.observe(0);
          audio?.continuityOk.inc(1);
          if (metrics !== undefined && metrics.stageGenTimeMs !== undefined) {
            audio?.rtf.observe(metrics.stageGenTimeMs / 1000 / duration);
            pipeline.generationTokens.inc(metrics.numTokensOut ?? 0);
            pipeline.stageGenTime[output.stageId]?.observe(metrics.stageGenTimeMs / 1000);
          }
        }
        yield output;
      }
    }
  }

  return { Orchestrator, Serving, samples: () => cells.samples() };
}
