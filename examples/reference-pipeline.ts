import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  OmniInstrumentation,
  registerOmniMetrics,
  type NativeHistogramOptions,
  type OmniMetricsHandle,
  type RequestLabelOptions,
  type SloOptions,
} from 'omni-otel-metrics';
import { AsyncOmni } from './pipeline/async-omni';
import { Orchestrator } from './pipeline/orchestrator';
import { KV_BLOCK_SIZE } from './pipeline/simulated-engine';
import { STAGE_NAMES } from './pipeline/pipeline-types';
import { createSimulatedPipeline, type SimulatedPipeline } from './pipeline/simulated-pipeline';
import { FAST_PROFILE, REALISTIC_PROFILE, type SimulationOverrides } from './pipeline/simulation-profile';
import { startPipelineTracing, type PipelineTracing, type PipelineTracingOptions } from './pipeline-tracing';
import { DEFAULT_IMAGE_REPLICAS, DEFAULT_REPLICAS, validateImageReplicas, validateReplicas } from './pipeline-options';
import { ConnectionTracker } from './server/connection-tracker';
import { createOpenAiHandler } from './server/openai-handler';

export const DEFAULT_MODEL_NAME = 'Qwen/Qwen3-Omni-30B-A3B-Instruct';
/** Loopback: the API and `/metrics` have no authentication, so they are not published to the network unless asked. */
export const DEFAULT_HOST = '127.0.0.1';

export interface ReferencePipelineOptions {
  /** API listen address; default `127.0.0.1` (loopback: the API and `/metrics` have no authentication). `0.0.0.0` serves every interface. */
  readonly host?: string;
  /** API port; default 8000, 0 picks a free one. */
  readonly port?: number;
  /** Separate `/metrics` server address; default the API host. */
  readonly metricsHost?: string;
  /** Separate `/metrics` server port; default 9464, 0 picks a free one, `false` serves metrics on the API port only. */
  readonly metricsPort?: number | false;
  /** Replicas per stage: [thinker, talker, code2wav]; default [1, 2, 1]. */
  readonly replicas?: readonly number[];
  /** Replicas of the image stage behind `POST /v1/images/generations`; default 1, 0 serves no images. */
  readonly imageReplicas?: number;
  /** Serve `/admin/replicas` (scale stages while serving) behind this bearer token; default none. */
  readonly adminToken?: string;
  /** Served model name (`model_name` label); default Qwen3-Omni. */
  readonly modelName?: string;
  /** Seeds every replica's PRNG; default 0. */
  readonly seed?: number;
  /** `realistic` (default): ~15 ms decode steps, real-time-ish audio. `fast`: millisecond steps for tests. */
  readonly profile?: 'realistic' | 'fast';
  /** Adjusts the chosen profile per section (e.g. `{ code2wav: { malformedProbability: 0 } }`). */
  readonly simulation?: SimulationOverrides;
  /** Thinker context length; default 4096. */
  readonly maxModelLen?: number;
  /** `max_tokens` when a request sets none; default 256. */
  readonly defaultMaxTokens?: number;
  /** vLLM's `--log-stats`; default true. */
  readonly logStats?: boolean;
  /** Wrap the pipeline's classes with the hooks; default true. `false` serves the pipeline without the package (the benchmark's baseline). */
  readonly instrument?: boolean;
  /** Periodic per-replica stats log line (vLLM's LoggingStatLogger); default 10 s, 0 disables. */
  readonly logIntervalSeconds?: number;
  readonly logSink?: { info(line: string): void; debug?(line: string): void };
  /** Per-request labels on the request families (`tenant`, `priority`); default none. `TENANT_LABELS` is a ready pair. */
  readonly requestLabels?: readonly RequestLabelOptions[];
  /**
   * Trace the pipeline: registers the OpenTelemetry trace SDK globally before the metrics (so
   * exemplars default on) and serves each API request inside a server span, child of its
   * `traceparent`. Default off. `TRACING=1` exports over OTLP/HTTP.
   */
  readonly tracing?: PipelineTracingOptions;
  /** Native (sparse exponential) buckets on the histogram families, as `registerOmniMetrics` takes them; default off. */
  readonly nativeHistograms?: boolean | NativeHistogramOptions;
  /** Objectives each request is judged on (goodput); default none. `SLO_*` variables set them for `npm start`. */
  readonly slo?: SloOptions;
}

/**
 * `tenant` from the OpenAI request's `user` (the first 20 distinct users keep their own series, the
 * rest are `other`) and `priority` from the `x-priority` header (`high` or `low`, else `other`).
 */
export const TENANT_LABELS: readonly RequestLabelOptions[] = [
  { name: 'tenant', from: (request) => request.user, maxValues: 20 },
  { name: 'priority', header: 'x-priority', values: ['high', 'low'] },
];

export interface ReferencePipeline {
  /** API root, e.g. `http://127.0.0.1:8000` (the OpenAI base URL is `${apiUrl}/v1`); a wildcard bind is reached through `localhost`. */
  readonly apiUrl: string;
  /** The address and port the API server really bound, e.g. `127.0.0.1:8000` or `0.0.0.0:8000`. */
  readonly apiAddress: string;
  /** The address and port the dedicated `/metrics` server really bound; undefined when there is none. */
  readonly metricsAddress?: string;
  /** The dedicated metrics server's scrape URL, or the API's `/metrics` when there is none. */
  readonly metricsUrl: string;
  /** `/metrics` on the API port (as vLLM serves it). */
  readonly apiMetricsUrl: string;
  readonly modelName: string;
  readonly omni: AsyncOmni;
  readonly orchestrator: Orchestrator;
  readonly metrics: OmniMetricsHandle;
  /** Stops accepting, ends in-flight requests, stops every loop, shuts metrics down. Idempotent. */
  stop(): Promise<void>;
}

/** In-flight responses get this long to finish after the pipeline stopped before sockets are cut. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * The simulated thinker → talker → code2wav pipeline (and thinker → image stage) behind an OpenAI-compatible API, with the
 * package's metrics registered and `/metrics` served both on the API port and on its own port.
 * The pipeline's classes make no metric calls: metrics come from the instrumentation alone.
 */
export async function startReferencePipeline(options: ReferencePipelineOptions = {}): Promise<ReferencePipeline> {
  const host = options.host ?? DEFAULT_HOST;
  const port = checkPort('port', options.port ?? 8000);
  const metricsPort = options.metricsPort === false ? false : checkPort('metricsPort', options.metricsPort ?? 9464);
  const replicas = validateReplicas(options.replicas ?? DEFAULT_REPLICAS);
  const imageReplicas = validateImageReplicas(options.imageReplicas ?? DEFAULT_IMAGE_REPLICAS);
  const modelName = options.modelName ?? DEFAULT_MODEL_NAME;
  const maxModelLen = options.maxModelLen ?? 4096;
  const profile = options.profile === 'fast' ? FAST_PROFILE : REALISTIC_PROFILE;

  // Before the metrics: with a tracer provider registered, exemplars default on.
  const tracing = options.tracing === undefined ? undefined : startPipelineTracing(options.tracing);
  let metrics: OmniMetricsHandle;
  try {
    metrics = await registerOmniMetrics({
      modelName,
      stagePools: replicas,
      // Dashboards show these instead of stage="0": vllm:omni_stage_info{stage, stage_name} 1.
      stageNames: STAGE_NAMES,
      logStats: options.logStats ?? true,
      prometheus: metricsPort === false ? false : { host: options.metricsHost ?? host, port: metricsPort },
      maxModelLen,
      cacheConfig: { block_size: KV_BLOCK_SIZE, cache_dtype: 'auto', enable_prefix_caching: true, num_gpu_blocks: profile.thinker.numKvBlocks },
      logIntervalSeconds: options.logIntervalSeconds,
      logSink: options.logSink,
      requestLabels: options.requestLabels,
      nativeHistograms: options.nativeHistograms,
      slo: options.slo,
    });
  } catch (error) {
    await tracing?.shutdown();
    throw error;
  }
  // The only metrics wiring there is: the pipeline's classes are observed through their prototypes.
  const instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: Orchestrator, servingClass: AsyncOmni, enabled: options.instrument ?? true });

  let pipeline: SimulatedPipeline | undefined;
  let server: Server | undefined;
  let connections: ConnectionTracker | undefined;
  try {
    pipeline = createSimulatedPipeline({ replicas, imageReplicas, profile, overrides: options.simulation, seed: options.seed ?? 0, maxModelLen });
    pipeline.start();
    const handler = createOpenAiHandler({
      omni: pipeline.omni,
      modelName,
      defaultMaxTokens: options.defaultMaxTokens,
      images: imageReplicas > 0,
      admin: options.adminToken ? { orchestrator: pipeline.orchestrator, token: options.adminToken } : undefined,
      // `/metrics` on the API port too, as vLLM serves it; every other path falls through to the API.
      extraHandler: metrics.metricsHandler(),
      tracer: tracing?.tracer,
    });
    server = createServer(handler);
    connections = new ConnectionTracker(server);
    await listen(server, host, port);
  } catch (error) {
    // A server whose listen failed still holds its handle until closed.
    server?.close();
    pipeline?.stop();
    instrumentation.disable();
    await metrics.shutdown();
    await tracing?.shutdown();
    throw error;
  }

  const bound = server.address() as AddressInfo;
  const apiUrl = `http://${urlHost(bound.address)}:${bound.port}`;
  const metricsServer = metrics.prometheusServer;
  const running = { server, pipeline, connections };
  let stopping: Promise<void> | undefined;
  return {
    apiUrl,
    apiAddress: hostPort(bound.address, bound.port),
    metricsAddress: metricsServer === undefined ? undefined : hostPort(metricsServer.host, metricsServer.port),
    metricsUrl: metrics.prometheusServer?.url ?? `${apiUrl}/metrics`,
    apiMetricsUrl: `${apiUrl}/metrics`,
    modelName,
    omni: pipeline.omni,
    orchestrator: pipeline.orchestrator,
    metrics,
    stop: () => (stopping ??= shutdown(running, metrics, instrumentation, tracing)),
  };
}

interface Running {
  readonly server: Server;
  readonly pipeline: SimulatedPipeline;
  readonly connections: ConnectionTracker;
}

async function shutdown(
  { server, pipeline, connections }: Running,
  metrics: OmniMetricsHandle,
  instrumentation: OmniInstrumentation,
  tracing: PipelineTracing | undefined,
): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Live requests fail now, so their responses end with an error event instead of hanging.
  pipeline.stop();
  // Connections turn idle as their last response ends; close them as they do.
  const sweep = setInterval(() => connections.closeIdle(), 20);
  const grace = setTimeout(() => connections.closeAll(), SHUTDOWN_GRACE_MS);
  connections.closeIdle();
  await closed;
  clearInterval(sweep);
  clearTimeout(grace);
  instrumentation.disable();
  await metrics.shutdown();
  // Last: the spans of the requests just ended are flushed to the exporter.
  await tracing?.shutdown();
}

/** Listens, or fails with an error that names the address and the setting that moves it (a bare EADDRINUSE names neither). */
function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => {
      const reason =
        error.code === 'EADDRINUSE'
          ? 'the port is in use by another process'
          : error.code === 'EACCES'
            ? 'permission denied'
            : error.code === 'EADDRNOTAVAIL'
              ? 'the address is not one of this host'
              : error.message;
      reject(
        new Error(
          `the reference pipeline's API cannot listen on ${hostPort(host, port)}: ${reason}. Set PORT (the \`port\` option; 0 picks a free port) or HOST (\`host\`).`,
          { cause: error },
        ),
      );
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

function checkPort(name: string, port: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`${name} must be an integer from 0 to 65535; got ${String(port)}`);
  return port;
}

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
