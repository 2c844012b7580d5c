import { resolveCatalog } from '../../views/catalog/catalog';
import type { CellFactory, CounterCell, GaugeCell, HistogramCell, Labels } from './cells';

const MODEL = 'm';
const catalog = resolveCatalog({ logStats: true });

function boundsOf(name: string): readonly number[] {
  const buckets = catalog.families.find((family) => family.name === name)?.buckets;
  if (!Array.isArray(buckets)) throw new Error(`${name} has no explicit buckets in the catalog`);
  return buckets as readonly number[];
}

/** The vLLM series of one (stage, replica), bound once. */
export interface EngineCells {
  readonly running: GaugeCell;
  readonly waiting: GaugeCell;
  readonly kvCacheUsage: GaugeCell;
  readonly promptTokens: CounterCell;
  readonly promptComputed: CounterCell;
  readonly promptCacheHit: CounterCell;
  readonly promptCached: CounterCell;
  readonly generationTokens: CounterCell;
  readonly successLength: CounterCell;
  readonly iterationTokens: HistogramCell;
  readonly timeToFirstToken: HistogramCell;
  readonly interTokenLatency: HistogramCell;
  readonly timePerOutputToken: HistogramCell;
  readonly e2eLatency: HistogramCell;
  readonly queueTime: HistogramCell;
  readonly inferenceTime: HistogramCell;
  readonly prefillTime: HistogramCell;
  readonly decodeTime: HistogramCell;
  readonly promptTokensPerRequest: HistogramCell;
  readonly generationTokensPerRequest: HistogramCell;
  readonly maxGenerationTokens: HistogramCell;
  readonly paramsN: HistogramCell;
  readonly paramsMaxTokens: HistogramCell;
  readonly prefillKvComputed: HistogramCell;
  readonly preemptions: HistogramCell;
}

/** The pipeline (`vllm:omni_*`) series the workload touches: per model, per stage, per last-stage replica, per hop. */
export interface PipelineCells {
  readonly successStop: CounterCell;
  readonly e2eLatency: HistogramCell;
  readonly queueWait: HistogramCell;
  readonly generationTokens: CounterCell;
  readonly stageWaiting: readonly GaugeCell[];
  readonly stageGenTime: readonly HistogramCell[];
  /** Per replica of the last stage. */
  readonly audio: ReadonlyArray<{
    readonly ttfp: HistogramCell;
    readonly duration: HistogramCell;
    readonly rtf: HistogramCell;
    readonly frames: CounterCell;
    readonly underrun: HistogramCell;
    readonly continuityOk: CounterCell;
  }>;
  /** [fromStage][fromReplica][toReplica] */
  readonly transferRx: readonly HistogramCell[][][];
  readonly transferInFlight: readonly HistogramCell[][][];
}

export function bindEngineCells(cells: CellFactory, stage: number, replica: number): EngineCells {
  const labels: Labels = { model_name: MODEL, stage: String(stage), replica: String(replica) };
  const h = (name: string): HistogramCell => cells.histogram(name, labels, boundsOf(name));
  return {
    running: cells.gauge('vllm:num_requests_running', labels),
    waiting: cells.gauge('vllm:num_requests_waiting', labels),
    kvCacheUsage: cells.gauge('vllm:kv_cache_usage_perc', labels),
    promptTokens: cells.counter('vllm:prompt_tokens_total', labels),
    promptComputed: cells.counter('vllm:prompt_tokens_by_source_total', { ...labels, source: 'local_compute' }),
    promptCacheHit: cells.counter('vllm:prompt_tokens_by_source_total', { ...labels, source: 'local_cache_hit' }),
    promptCached: cells.counter('vllm:prompt_tokens_cached_total', labels),
    generationTokens: cells.counter('vllm:generation_tokens_total', labels),
    successLength: cells.counter('vllm:request_success_total', { ...labels, finished_reason: 'length' }),
    iterationTokens: h('vllm:iteration_tokens_total'),
    timeToFirstToken: h('vllm:time_to_first_token_seconds'),
    interTokenLatency: h('vllm:inter_token_latency_seconds'),
    timePerOutputToken: h('vllm:request_time_per_output_token_seconds'),
    e2eLatency: h('vllm:e2e_request_latency_seconds'),
    queueTime: h('vllm:request_queue_time_seconds'),
    inferenceTime: h('vllm:request_inference_time_seconds'),
    prefillTime: h('vllm:request_prefill_time_seconds'),
    decodeTime: h('vllm:request_decode_time_seconds'),
    promptTokensPerRequest: h('vllm:request_prompt_tokens'),
    generationTokensPerRequest: h('vllm:request_generation_tokens'),
    maxGenerationTokens: h('vllm:request_max_num_generation_tokens'),
    paramsN: h('vllm:request_params_n'),
    paramsMaxTokens: h('vllm:request_params_max_tokens'),
    prefillKvComputed: h('vllm:request_prefill_kv_computed_tokens'),
    preemptions: h('vllm:request_num_preemptions'),
  };
}

export function bindPipelineCells(cells: CellFactory, pools: readonly number[]): PipelineCells {
  const model: Labels = { model_name: MODEL };
  const h = (name: string, labels: Labels): HistogramCell => cells.histogram(name, labels, boundsOf(name));
  const last = pools.length - 1;
  const hops = (name: string): HistogramCell[][][] =>
    pools.slice(0, last).map((fromCount, from) =>
      Array.from({ length: fromCount }, (_, fromReplica) =>
        Array.from({ length: pools[from + 1] ?? 0 }, (__, toReplica) =>
          h(name, {
            model_name: MODEL,
            from_stage: String(from),
            from_replica: String(fromReplica),
            to_stage: String(from + 1),
            to_replica: String(toReplica),
          }),
        ),
      ),
    );
  return {
    successStop: cells.counter('vllm:omni_requests_success_total', { ...model, finished_reason: 'stop' }),
    e2eLatency: h('vllm:omni_e2e_request_latency_s', model),
    queueWait: h('vllm:omni_request_queue_wait_s', model),
    generationTokens: cells.counter('vllm:omni_generation_tokens_total', model),
    stageWaiting: pools.map((_, stage) => cells.gauge('vllm:omni_stage_waiting_requests', { ...model, stage: String(stage) })),
    stageGenTime: pools.map((_, stage) => h('vllm:omni_stage_gen_time_s', { ...model, stage: String(stage), stage_type: 'llm' })),
    audio: Array.from({ length: pools[last] ?? 0 }, (_, replica) => {
      const labels: Labels = { ...model, stage: String(last), replica: String(replica) };
      return {
        ttfp: h('vllm:omni_audio_ttfp_s', labels),
        duration: h('vllm:omni_audio_duration_s', labels),
        rtf: h('vllm:omni_audio_rtf', labels),
        frames: cells.counter('vllm:omni_audio_frames_total', labels),
        underrun: h('vllm:omni_audio_underrun_s', labels),
        continuityOk: cells.counter('vllm:omni_audio_continuity_ok_total', { ...labels, threshold_ms: '100' }),
      };
    }),
    transferRx: hops('vllm:omni_transfer_rx_s'),
    transferInFlight: hops('vllm:omni_transfer_in_flight_s'),
  };
}
