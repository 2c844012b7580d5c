/**
 * Generates `omni-pipeline-dashboard.json` (Grafana, Prometheus data source): vLLM's engine panels
 * per stage and replica, plus the pipeline's audio, image / diffusion and cross-stage transfer panels. The JSON is
 * checked in; regenerate it after editing this file with `npx tsx examples/grafana/build-dashboard.ts`
 * (a test fails while the two disagree).
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';

export const DASHBOARD_PATH = path.join(__dirname, 'omni-pipeline-dashboard.json');

interface Target {
  readonly expr: string;
  readonly legend: string;
}

interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly targets: readonly Target[];
  /** A red threshold line (e.g. RTF = 1). */
  readonly threshold?: number;
}

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' } as const;
/** Series of one engine family, narrowed by the dashboard's variables. */
const ENGINE = 'model_name="$model_name", stage=~"$stage", replica=~"$replica"';
const MODEL = 'model_name="$model_name"';
/** Series of a per-stage family (no replica label). */
const STAGE = 'model_name="$model_name", stage=~"$stage"';
/**
 * The tenant series of a request family (the `requestLabels` option), narrowed by the tenant
 * variable. `tenant!=""` keeps out the series without a tenant label, which `tenant=~".*"` (All)
 * would match: a tenant panel is empty without the option.
 */
const TENANT_ONLY = 'tenant=~"$tenant", tenant!=""';
const TENANT = `model_name="$model_name", ${TENANT_ONLY}`;
const RATE = '[$__rate_interval]';
/** Requests that finished successfully: what goodput is judged among (the denominator of attainment). */
const FINISHED = 'finished_reason!~"abort|error"';
const STAGE_REPLICA = 'stage {{stage}} / replica {{replica}}';
const EDGE = '{{from_stage}}/{{from_replica}} → {{to_stage}}/{{to_replica}}';
const EDGE_LABELS = 'from_stage, from_replica, to_stage, to_replica';

/** A quantile of a histogram in seconds (`…_seconds` / `…_s`): its buckets keep exemplars. */
function isLatencyQuantile(target: Target): boolean {
  return /^histogram_quantile\(.*\(vllm:[\w:]+_(seconds|s)_bucket\{/.test(target.expr);
}

/** The stage-name info family, one series per (stage, name) whatever the number of scraped processes. */
const STAGE_NAMES = `max by (stage, stage_name) (vllm:omni_stage_info{${MODEL}})`;

/**
 * A per-stage query whose series carry `stage_name`: the stage's name from `vllm:omni_stage_info`
 * (the `stageNames` option), else `stage N`, so a pipeline that names no stage keeps every series.
 */
function withStageNames(target: Target): Target {
  if (!target.legend.includes('{{stage}}')) return target;
  const { expr } = target;
  return {
    expr: `${expr} * on (stage) group_left (stage_name) ${STAGE_NAMES} or ignoring (stage_name) label_replace(${expr}, "stage_name", "stage $1", "stage", "(.*)")`,
    legend: target.legend.replace('stage {{stage}}', '{{stage_name}}'),
  };
}

function quantile(q: number, family: string, by: string, selector: string): string {
  return `histogram_quantile(${q}, sum by (le, ${by}) (rate(${family}_bucket{${selector}}${RATE})))`;
}

/** p50 and p99 of an engine histogram, one series per stage/replica. */
function engineQuantiles(family: string, label = ''): Target[] {
  return [0.5, 0.99].map((q) => ({
    expr: quantile(q, family, 'stage, replica', ENGINE),
    legend: `${label}p${q * 100} ${STAGE_REPLICA}`,
  }));
}

function edgeQuantile(q: number, family: string): Target {
  return { expr: quantile(q, family, EDGE_LABELS, MODEL), legend: `p${q * 100} ${EDGE}` };
}

const ROWS: ReadonlyArray<{ readonly title: string; readonly panels: readonly PanelSpec[] }> = [
  {
    title: 'Pipeline (orchestrator scope)',
    panels: [
      {
        title: 'Requests running / waiting',
        description: 'Requests admitted by the orchestrator and not yet cleaned up, and requests served but not yet admitted.',
        unit: 'short',
        targets: [
          { expr: `vllm:omni_num_requests_running{${MODEL}}`, legend: 'running' },
          { expr: `vllm:omni_num_requests_waiting{${MODEL}}`, legend: 'waiting' },
        ],
      },
      {
        title: 'Completed requests by reason',
        description: 'stop / length from the final stage; abort covers client disconnects and cancellations.',
        unit: 'reqps',
        targets: [{ expr: `sum by (finished_reason) (rate(vllm:omni_requests_success_total{${MODEL}}${RATE}))`, legend: '{{finished_reason}}' }],
      },
      {
        title: 'End-to-end latency (whole pipeline)',
        description: 'Arrival to final output across all stages.',
        unit: 's',
        targets: [0.5, 0.9, 0.99].map((q) => ({ expr: quantile(q, 'vllm:omni_e2e_request_latency_s', 'model_name', MODEL), legend: `p${q * 100}` })),
      },
      {
        title: 'Failed requests by reason',
        description: 'client_abort / client_disconnect / stage_error / unknown; each is also in the abort completions.',
        unit: 'reqps',
        targets: [{ expr: `sum by (reason) (rate(vllm:omni_requests_failed_total{${MODEL}}${RATE}))`, legend: '{{reason}}' }],
      },
      {
        title: 'Request queue wait',
        description: 'Arrival at the serving layer to the first stage submit.',
        unit: 's',
        targets: [0.5, 0.99].map((q) => ({ expr: quantile(q, 'vllm:omni_request_queue_wait_s', 'model_name', MODEL), legend: `p${q * 100}` })),
      },
      {
        title: 'Stage generation time (p99)',
        description: 'Stage submit to finished output, queueing included, per stage and stage type.',
        unit: 's',
        targets: [{ expr: quantile(0.99, 'vllm:omni_stage_gen_time_s', 'stage, stage_type', STAGE), legend: 'stage {{stage}} ({{stage_type}})' }],
      },
      {
        title: 'Token throughput (pipeline)',
        description: 'Prompt tokens of the first stage and generated tokens of every stage, per second.',
        unit: 'short',
        targets: [
          { expr: `rate(vllm:omni_prompt_tokens_total{${MODEL}}${RATE})`, legend: 'prompt tokens/s' },
          { expr: `rate(vllm:omni_generation_tokens_total{${MODEL}}${RATE})`, legend: 'generated tokens/s' },
        ],
      },
    ],
  },
  {
    title: 'LLM stages (vLLM engine metrics per stage / replica)',
    panels: [
      { title: 'Time to first token', description: 'vLLM TTFT per engine.', unit: 's', targets: engineQuantiles('vllm:time_to_first_token_seconds') },
      {
        title: 'Inter-token latency',
        description: 'Time between consecutive output tokens.',
        unit: 's',
        targets: engineQuantiles('vllm:inter_token_latency_seconds'),
      },
      {
        title: 'Engine end-to-end latency',
        description: 'Arrival at the stage to its last token.',
        unit: 's',
        targets: engineQuantiles('vllm:e2e_request_latency_seconds'),
      },
      {
        title: 'Queue / prefill / decode time (p99)',
        description: 'Where a request spends its time inside one engine.',
        unit: 's',
        targets: [
          { expr: quantile(0.99, 'vllm:request_queue_time_seconds', 'stage, replica', ENGINE), legend: `queue ${STAGE_REPLICA}` },
          { expr: quantile(0.99, 'vllm:request_prefill_time_seconds', 'stage, replica', ENGINE), legend: `prefill ${STAGE_REPLICA}` },
          { expr: quantile(0.99, 'vllm:request_decode_time_seconds', 'stage, replica', ENGINE), legend: `decode ${STAGE_REPLICA}` },
        ],
      },
      {
        title: 'Scheduler: running / waiting',
        description: 'vLLM scheduler state, refreshed at most once per second per replica.',
        unit: 'short',
        targets: [
          { expr: `vllm:num_requests_running{${ENGINE}}`, legend: `running ${STAGE_REPLICA}` },
          { expr: `vllm:num_requests_waiting{${ENGINE}}`, legend: `waiting ${STAGE_REPLICA}` },
        ],
      },
      {
        title: 'KV cache usage',
        description: 'Fraction of KV blocks in use; near 1 means preemptions.',
        unit: 'percentunit',
        threshold: 0.9,
        targets: [{ expr: `vllm:kv_cache_usage_perc{${ENGINE}}`, legend: STAGE_REPLICA }],
      },
      {
        title: 'Token throughput per engine',
        description: 'Prompt and generation tokens per second.',
        unit: 'short',
        targets: [
          { expr: `sum by (stage, replica) (rate(vllm:prompt_tokens_total{${ENGINE}}${RATE}))`, legend: `prompt ${STAGE_REPLICA}` },
          { expr: `sum by (stage, replica) (rate(vllm:generation_tokens_total{${ENGINE}}${RATE}))`, legend: `generation ${STAGE_REPLICA}` },
        ],
      },
      {
        title: 'Request success by reason',
        description: 'Finished requests per engine and finish reason.',
        unit: 'reqps',
        targets: [
          {
            expr: `sum by (stage, replica, finished_reason) (rate(vllm:request_success_total{${ENGINE}}${RATE}))`,
            legend: `{{finished_reason}} ${STAGE_REPLICA}`,
          },
        ],
      },
      {
        title: 'Prefix cache hit rate',
        description: 'Prompt tokens served from the prefix cache / tokens looked up.',
        unit: 'percentunit',
        targets: [
          {
            expr:
              `sum by (stage, replica) (rate(vllm:prefix_cache_hits_total{${ENGINE}}${RATE}))` +
              ` / sum by (stage, replica) (rate(vllm:prefix_cache_queries_total{${ENGINE}}${RATE}))`,
            legend: STAGE_REPLICA,
          },
        ],
      },
      {
        title: 'Preemptions',
        description: 'Requests evicted from the running batch under KV-cache pressure.',
        unit: 'short',
        targets: [{ expr: `sum by (stage, replica) (rate(vllm:num_preemptions_total{${ENGINE}}${RATE}))`, legend: STAGE_REPLICA }],
      },
    ],
  },
  {
    title: 'Audio (code2wav)',
    panels: [
      {
        title: 'Time to first audio packet',
        description: 'Request arrival to the first audio chunk.',
        unit: 's',
        targets: engineQuantiles('vllm:omni_audio_ttfp_s'),
      },
      {
        title: 'Real-time factor',
        description: 'Stage generation time / audio duration; at or above 1 the replica cannot keep up with playback.',
        unit: 'none',
        threshold: 1,
        targets: engineQuantiles('vllm:omni_audio_rtf'),
      },
      {
        title: 'Streaming underrun (p99) and continuity',
        description: 'Worst player deficit per request, and the share of streams within the continuity threshold.',
        unit: 's',
        targets: [
          { expr: quantile(0.99, 'vllm:omni_audio_underrun_s', 'stage, replica', ENGINE), legend: `underrun p99 ${STAGE_REPLICA}` },
          {
            expr:
              `sum by (stage, replica) (rate(vllm:omni_audio_continuity_ok_total{${ENGINE}}${RATE}))` +
              ` / sum by (stage, replica) (rate(vllm:omni_audio_underrun_s_count{${ENGINE}}${RATE}))`,
            legend: `continuous share ${STAGE_REPLICA}`,
          },
        ],
      },
      {
        title: 'Silent audio loss',
        description: 'Requests that succeeded with no audio (malformed codec input), per reason.',
        unit: 'short',
        targets: [
          {
            expr: `sum by (stage, replica, reason) (increase(vllm:omni_audio_skipped_requests_total{${ENGINE}}${RATE}))`,
            legend: `{{reason}} ${STAGE_REPLICA}`,
          },
        ],
      },
      {
        title: 'Audio generated',
        description: 'Seconds of audio produced per second (frames at 24 kHz), and the median clip duration.',
        unit: 's',
        targets: [
          { expr: `sum by (stage, replica) (rate(vllm:omni_audio_frames_total{${ENGINE}}${RATE})) / 24000`, legend: `audio s/s ${STAGE_REPLICA}` },
          { expr: quantile(0.5, 'vllm:omni_audio_duration_s', 'stage, replica', ENGINE), legend: `duration p50 ${STAGE_REPLICA}` },
        ],
      },
      {
        title: 'Replica routing',
        description: 'Requests routed to each replica, and its polled-output backlog.',
        unit: 'short',
        targets: [
          { expr: `vllm:omni_stage_inflight_requests{${ENGINE}}`, legend: `in flight ${STAGE_REPLICA}` },
          { expr: `vllm:omni_stage_outputs_queue_size{${ENGINE}}`, legend: `output queue ${STAGE_REPLICA}` },
        ],
      },
    ],
  },
  {
    title: 'Image and diffusion stages',
    panels: [
      {
        title: 'Images generated',
        description: 'Images per second, and the mean pixels and denoising steps per request.',
        unit: 'short',
        targets: [
          { expr: `rate(vllm:omni_image_count_total{${MODEL}}${RATE})`, legend: 'images/s' },
          { expr: `rate(vllm:omni_image_pixels_sum{${MODEL}}${RATE}) / rate(vllm:omni_image_pixels_count{${MODEL}}${RATE})`, legend: 'pixels per request' },
          {
            expr: `rate(vllm:omni_num_inference_steps_sum{${MODEL}}${RATE}) / rate(vllm:omni_num_inference_steps_count{${MODEL}}${RATE})`,
            legend: 'steps per request',
          },
        ],
      },
      {
        title: 'Image time to first output',
        description: 'Image-stage submit to the first image.',
        unit: 's',
        targets: engineQuantiles('vllm:omni_image_ttfp_s'),
      },
      {
        title: 'Diffusion breakdown (p99)',
        description: 'Execution, preprocessing, postprocessing, VAE decode, forward-only denoise loop and KV receive, per replica.',
        unit: 's',
        targets: (
          [
            ['exec', 'vllm:omni_diffusion_exec_s'],
            ['preprocess', 'vllm:omni_diffusion_preprocess_s'],
            ['postprocess', 'vllm:omni_diffusion_postprocess_s'],
            ['VAE decode', 'vllm:omni_vae_decode_s'],
            ['forward', 'vllm:omni_diffusion_forward_s'],
            ['KV load', 'vllm:omni_diffusion_kv_load_s'],
          ] as const
        ).map(([label, family]) => ({ expr: quantile(0.99, family, 'stage, replica', ENGINE), legend: `${label} ${STAGE_REPLICA}` })),
      },
      {
        title: 'Denoise step latency',
        description: 'Mean forward time per denoising step, and execution time per step.',
        unit: 's',
        targets: [
          ...engineQuantiles('vllm:omni_denoise_step_latency_s', 'denoise '),
          { expr: quantile(0.99, 'vllm:omni_diffusion_exec_per_step_s', 'stage, replica', ENGINE), legend: `exec/step p99 ${STAGE_REPLICA}` },
        ],
      },
      {
        title: 'Diffusion queue',
        description: 'Waiting requests summed over a stage\u2019s replicas, and the scheduler wait to first admission (zero when idle).',
        unit: 'short',
        targets: [
          { expr: `vllm:omni_stage_waiting_requests{${STAGE}}`, legend: 'waiting stage {{stage}}' },
          { expr: quantile(0.99, 'vllm:omni_stage_in_queue_s', 'stage', STAGE), legend: 'in-queue p99 (s) stage {{stage}}' },
        ],
      },
      {
        title: 'Peak memory and KV waits',
        description: 'Peak accelerator memory per stage (MB), and the p99 wait for KV blocks per connector (s).',
        unit: 'short',
        targets: [
          { expr: `vllm:omni_peak_memory_mb{${STAGE}}`, legend: 'peak MB stage {{stage}}' },
          { expr: quantile(0.99, 'vllm:omni_kv_wait_s', 'connector_type', MODEL), legend: 'KV wait p99 {{connector_type}}' },
        ],
      },
    ],
  },
  {
    title: 'Cross-stage transfers (per edge)',
    panels: [
      {
        title: 'Sender time (serialize + submit)',
        description: 'Per hop, sender side.',
        unit: 's',
        targets: [edgeQuantile(0.5, 'vllm:omni_transfer_tx_s'), edgeQuantile(0.99, 'vllm:omni_transfer_tx_s')],
      },
      {
        title: 'Receiver time (receive + deserialize)',
        description: 'Per hop, receiver side.',
        unit: 's',
        targets: [edgeQuantile(0.5, 'vllm:omni_transfer_rx_s'), edgeQuantile(0.99, 'vllm:omni_transfer_rx_s')],
      },
      {
        title: 'In-flight time',
        description: 'Sender done to receiver start: connector and queueing between stages.',
        unit: 's',
        targets: [edgeQuantile(0.5, 'vllm:omni_transfer_in_flight_s'), edgeQuantile(0.99, 'vllm:omni_transfer_in_flight_s')],
      },
      {
        title: 'Payload size and hop rate',
        description: 'Median payload per hop, and hops per second.',
        unit: 'bytes',
        targets: [
          edgeQuantile(0.5, 'vllm:omni_transfer_size_bytes'),
          { expr: `sum by (${EDGE_LABELS}) (rate(vllm:omni_transfer_size_bytes_count{${MODEL}}${RATE}))`, legend: `hops/s ${EDGE}` },
        ],
      },
    ],
  },
  {
    title: 'Tenants and priority classes (requestLabels)',
    panels: [
      {
        title: 'Requests per tenant',
        description: 'Completions per second by tenant (the requestLabels option; empty without it). "other": tenants past the allow-list / maxValues.',
        unit: 'reqps',
        targets: [{ expr: `sum by (tenant) (rate(vllm:omni_requests_success_total{${TENANT}}${RATE}))`, legend: '{{tenant}}' }],
      },
      {
        title: 'Failed requests per tenant',
        description: "Share of each tenant's requests that failed (client_abort / client_disconnect / stage_error / unknown).",
        unit: 'percentunit',
        targets: [
          {
            expr: `sum by (tenant) (rate(vllm:omni_requests_failed_total{${TENANT}}${RATE})) / sum by (tenant) (rate(vllm:omni_requests_success_total{${TENANT}}${RATE}))`,
            legend: '{{tenant}}',
          },
        ],
      },
      {
        title: 'End-to-end latency per tenant and priority',
        description: 'p99 arrival to final output, per tenant and priority class.',
        unit: 's',
        targets: [{ expr: quantile(0.99, 'vllm:omni_e2e_request_latency_s', 'tenant, priority', TENANT), legend: 'p99 {{tenant}} / {{priority}}' }],
      },
      {
        title: 'Audio time to first packet per priority',
        description: 'p99 arrival to the first audio packet, per priority class (all tenants of the selection).',
        unit: 's',
        targets: [{ expr: quantile(0.99, 'vllm:omni_audio_ttfp_s', 'priority', `${ENGINE}, ${TENANT_ONLY}`), legend: 'p99 {{priority}}' }],
      },
      {
        title: 'Queue wait per priority',
        description: 'p99 arrival to the first stage submit, per priority class: whether high priority really waits less.',
        unit: 's',
        targets: [{ expr: quantile(0.99, 'vllm:omni_request_queue_wait_s', 'priority', TENANT), legend: 'p99 {{priority}}' }],
      },
      {
        title: 'Tokens per tenant',
        description: 'Prompt and generated tokens per second, by tenant.',
        unit: 'short',
        targets: [
          { expr: `sum by (tenant) (rate(vllm:omni_prompt_tokens_total{${TENANT}}${RATE}))`, legend: 'prompt {{tenant}}' },
          { expr: `sum by (tenant) (rate(vllm:omni_generation_tokens_total{${TENANT}}${RATE}))`, legend: 'generated {{tenant}}' },
        ],
      },
    ],
  },
  {
    title: 'Goodput (slo)',
    panels: [
      {
        title: 'Goodput: requests that met every objective',
        description:
          'Requests per second that finished successfully and met every objective of the slo option that applies to them, beside all successfully finished requests (empty without the option).',
        unit: 'reqps',
        targets: [
          { expr: `sum(rate(vllm:omni_requests_good_total{${MODEL}}${RATE}))`, legend: 'good' },
          { expr: `sum(rate(vllm:omni_requests_success_total{${MODEL}, ${FINISHED}}${RATE}))`, legend: 'finished' },
        ],
      },
      {
        title: 'SLO attainment (good ÷ finished)',
        description: 'Share of the successfully finished requests that met every objective that applies to them.',
        unit: 'percentunit',
        targets: [
          {
            expr: `sum(rate(vllm:omni_requests_good_total{${MODEL}}${RATE})) / sum(rate(vllm:omni_requests_success_total{${MODEL}, ${FINISHED}}${RATE}))`,
            legend: 'attainment',
          },
        ],
      },
      {
        title: 'SLO misses by objective',
        description: 'Objectives missed per second (first_output, e2e, tpot, audio_ttfp, audio_rtf); a request can miss several.',
        unit: 'reqps',
        targets: [{ expr: `sum by (objective) (rate(vllm:omni_slo_misses_total{${MODEL}}${RATE}))`, legend: '{{objective}}' }],
      },
      {
        title: 'Goodput per tenant',
        description: 'Good requests per second by tenant (the requestLabels option).',
        unit: 'reqps',
        targets: [{ expr: `sum by (tenant) (rate(vllm:omni_requests_good_total{${TENANT}}${RATE}))`, legend: '{{tenant}}' }],
      },
      {
        title: 'SLO attainment per tenant',
        description: "Share of each tenant's successfully finished requests that met every objective.",
        unit: 'percentunit',
        targets: [
          {
            expr:
              `sum by (tenant) (rate(vllm:omni_requests_good_total{${TENANT}}${RATE}))` +
              ` / sum by (tenant) (rate(vllm:omni_requests_success_total{${TENANT}, ${FINISHED}}${RATE}))`,
            legend: '{{tenant}}',
          },
        ],
      },
      {
        title: 'Misses per tenant and objective',
        description: 'Which objective each tenant misses, per second.',
        unit: 'reqps',
        targets: [{ expr: `sum by (tenant, objective) (rate(vllm:omni_slo_misses_total{${TENANT}}${RATE}))`, legend: '{{tenant}} {{objective}}' }],
      },
    ],
  },
];

/**
 * Every stage, named where `vllm:omni_stage_info` names it: its series (stage and stage_name) and,
 * for stages it does not name, the stages engines report. Grafana's `query_result` lists them; the
 * variable's regex takes the id as the value and the name, when there is one, as the text.
 */
const STAGE_CHOICES = `query_result(max by (stage, stage_name) (vllm:omni_stage_info{model_name="$model_name"}) or on (stage) max by (stage) (vllm:num_requests_running{model_name="$model_name"}))`;
/** Grafana prints each result as `{stage="3",stage_name="diffusion"} 1 1764113643000`: labels sorted, joined by commas. */
const STAGE_CHOICE_REGEX = '/stage="(?<value>[^"]*)"(?:,stage_name="(?<text>[^"]*)")?/';

function queryVariable(name: string, label: string, query: string, multi: boolean, regex?: string): object {
  return {
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    query: { query, refId: `${name}-query` },
    definition: query,
    ...(regex === undefined ? {} : { regex }),
    refresh: 2,
    sort: 1,
    multi,
    includeAll: multi,
    allValue: multi ? '.*' : undefined,
    current: {},
    options: [],
    hide: 0,
  };
}

export function buildDashboard(): object {
  const panels: object[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    row.panels.forEach((spec, index) => {
      panels.push({
        id: id++,
        type: 'timeseries',
        title: spec.title,
        description: spec.description,
        datasource: DATASOURCE,
        gridPos: { h: 8, w: 12, x: (index % 2) * 12, y: y + Math.floor(index / 2) * 8 },
        fieldConfig: {
          defaults: {
            unit: spec.unit,
            custom: {
              drawStyle: 'line',
              lineWidth: 1,
              fillOpacity: 10,
              showPoints: 'never',
              spanNulls: true,
              thresholdsStyle: { mode: spec.threshold === undefined ? 'off' : 'line' },
            },
            thresholds: {
              mode: 'absolute',
              steps: [{ color: 'green', value: null }, ...(spec.threshold === undefined ? [] : [{ color: 'red', value: spec.threshold }])],
            },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['mean', 'max'] },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
        targets: spec.targets.map(withStageNames).map((target, i) => ({
          refId: String.fromCharCode(65 + i),
          datasource: DATASOURCE,
          expr: target.expr,
          legendFormat: target.legend,
          range: true,
          // Latency quantiles draw the kept exemplars (Prometheus with exemplar-storage), each linking to its trace.
          ...(isLatencyQuantile(target) ? { exemplar: true } : {}),
        })),
      });
    });
    y += Math.ceil(row.panels.length / 2) * 8;
  }

  return {
    uid: 'omni-pipeline',
    title: 'Omni pipeline (thinker → talker → code2wav, diffusion)',
    description: 'vLLM engine metrics per stage and replica, plus audio SLOs and cross-stage transfers (omni-otel-metrics).',
    tags: ['vllm', 'vllm-omni', 'omni-otel-metrics'],
    editable: true,
    graphTooltip: 1,
    refresh: '10s',
    schemaVersion: 39,
    time: { from: 'now-30m', to: 'now' },
    timezone: 'browser',
    annotations: { list: [] },
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0, options: [], refresh: 1 },
        queryVariable('model_name', 'Model', 'label_values(vllm:omni_num_requests_running, model_name)', false),
        queryVariable('stage', 'Stage', STAGE_CHOICES, true, STAGE_CHOICE_REGEX),
        queryVariable('replica', 'Replica', 'label_values(vllm:num_requests_running{model_name="$model_name", stage=~"$stage"}, replica)', true),
        queryVariable('tenant', 'Tenant', 'label_values(vllm:omni_requests_success_total{model_name="$model_name"}, tenant)', true),
      ],
    },
    panels,
  };
}

export function dashboardJson(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(DASHBOARD_PATH, dashboardJson());
  console.log(`wrote ${DASHBOARD_PATH}`);
}
