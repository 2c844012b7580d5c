/** What `registerOmniMetrics` accepts: every option, typed and documented. */
import type { MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import type { EnginePullOptions } from './exporters/engine-pull/types';
import type { MetricsExporterName, OtlpOptions } from './exporters/otlp/types';
import type { PrometheusServerOptions } from './exporters/prometheus-http';
import type { OmniPrometheusReader } from './exporters/prometheus-reader';
import type { RequestLabelOptions } from './instrumentation/recorders/request-labels';
import type { CacheConfigInfo } from './instrumentation/recorders/stat-logger';
import type { SelfCheckOptions } from './instrumentation/self-check/types';
import type { FeatureOptions } from './views/catalog/catalog';
import type { SloOptions } from './views/catalog/slo-families';
import type { PipelinePrefix } from './views/catalog/names';
import type { OmniMetricProducer } from './views/store/metric-producer';
import type { NativeHistogramOptions } from './views/store/native-histogram-settings';
import type { NamingScheme } from './views/views';

/** Where log lines go (the periodic stats lines, self-check warnings). */
export interface LogSink {
  /** Takes one line: a periodic stats line of an active engine, or a self-check line. */
  info(line: string): void;
  /** Optional: takes the periodic stats lines of idle engines, which are dropped without it. */
  debug?(line: string): void;
}

/** The `prometheus` option: the built-in `/metrics` server and what it prints. */
export interface PrometheusOptions extends PrometheusServerOptions {
  /** Add `target_info` from the resource (vLLM has none). */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_*` labels (vLLM has none). */
  readonly withScopeLabels?: boolean;
  /**
   * Print `<name>_created` for every counter and histogram series, as vLLM's prometheus_client
   * does. Default on, unless `PROMETHEUS_DISABLE_CREATED_SERIES` is `true`, `1` or `t`.
   */
  readonly createdSeries?: boolean;
  /**
   * How `/metrics` picks its format. `negotiate` (default): OpenMetrics when the scraper prefers it
   * (Prometheus does), the 0.0.4 text otherwise; needed for exemplars. `text`: the 0.0.4 text
   * whatever the `Accept` header, as vLLM's `/metrics` answers; a Prometheus then also stores the
   * `_created` series as samples. See docs/exposition.md.
   */
  readonly exposition?: 'negotiate' | 'text';
}

/** Options of `registerOmniMetrics`; only `modelName` is required. */
export interface OmniMetricsOptions {
  /** `model_name` label value (vLLM's served model name). */
  readonly modelName: string;
  /**
   * Replicas per vLLM engine stage in stage order, e.g. [1, 2, 1]; defines the engine → (stage,
   * replica) map. Default none: only the pipeline-level families are recorded per stage.
   */
  readonly stagePools?: readonly number[];
  /**
   * A name per stage id, in stage order (`['thinker', 'talker', 'code2wav']`): served as
   * `vllm:omni_stage_info{model_name, stage, stage_name} 1`, for dashboards to join on `stage`.
   * Default none: no stage-name family.
   */
  readonly stageNames?: readonly string[];
  /** Upstream `--log-stats`, default off: pipeline families declared but silent, upstream families absent. */
  readonly logStats?: boolean;
  /** Pipeline family prefix; default `vllm:omni_`. */
  readonly prefix?: PipelinePrefix;
  /** vLLM's `max_model_len`, for the 1-2-5 token buckets; default 4096. */
  readonly maxModelLen?: number;
  /** Optional vLLM features whose families are registered only when configured. */
  readonly features?: FeatureOptions;
  /** Expose every deprecated upstream name the package knows, including those vLLM has since deleted. */
  readonly showHiddenMetrics?: boolean;
  /**
   * vLLM's `--show-hidden-metrics-for-version`, by vLLM's rule: only the minor release before the
   * matched vLLM (`'0.31'` for vLLM 0.32) shows anything, namely the families that release itself
   * hid. vLLM 0.32 hid none, so this shows none; `showHiddenMetrics: true` shows the older names.
   */
  readonly showHiddenMetricsForVersion?: string;
  /**
   * vLLM's `--custom-histogram-buckets`, the same JSON (string or object): bucket family →
   * strictly increasing, positive, finite bounds, e.g. `'{"request_latency": [0.01, 0.1, 1]}'`.
   */
  readonly customHistogramBuckets?: string | Readonly<Record<string, readonly number[]>>;
  /** YAML/JSON file with bucket overrides and extra families (see `loadMetricsConfig`). */
  readonly configFile?: string;
  /** `vllm:cache_config_info` labels: the engine's CacheConfig fields, as vLLM's `metrics_info()`. */
  readonly cacheConfig?: CacheConfigInfo;
  /**
   * Serve `/metrics` on its own port (default: `OTEL_EXPORTER_PROMETHEUS_HOST/PORT`, else
   * 127.0.0.1:9464), or `false` for no server (mount `handle.metricsHandler()` instead). No server
   * either when `exporters` leaves out `prometheus`; `metricsText()` works in every case.
   */
  readonly prometheus?: false | PrometheusOptions;
  /**
   * Which exporters run; default `OTEL_METRICS_EXPORTER`, else `['prometheus']`. `otlp` and
   * `console` push periodically; `['none']` (or `[]`) runs none.
   */
  readonly exporters?: readonly MetricsExporterName[];
  /** OTLP protocol, endpoint, headers, timeouts, interval, temporality; each wins over its `OTEL_*` variable. */
  readonly otlp?: OtlpOptions;
  /** `service.name` of the resource; wins over `OTEL_SERVICE_NAME` and the `resource` option. */
  readonly serviceName?: string;
  /**
   * Also record the GenAI semantic-convention histograms (`gen_ai.server.time_to_first_token`,
   * `…time_per_output_token`, `…request.duration`, `gen_ai.client.token.usage`) from the upstream
   * stats; needs `logStats`. Default off.
   */
  readonly genAiMetrics?: boolean;
  /** Stream naming; default `vllm` (exact vLLM names). */
  readonly naming?: NamingScheme;
  /** Merged over the SDK default and `OTEL_RESOURCE_ATTRIBUTES` / `OTEL_SERVICE_NAME`. */
  readonly resource?: Resource;
  /**
   * Further readers of your own, attached to the provider this call creates. The package's
   * families reach a reader through an `OmniMetricProducer` in its `metricProducers`: create one,
   * give it to the reader, and list it in `metricProducers` here.
   */
  readonly readers?: readonly MetricReader[];
  /** Producers (created before the store existed) that this call attaches to the package's series store. */
  readonly metricProducers?: readonly OmniMetricProducer[];
  /** Label sets per family before new ones fold into one overflow series; default 2000. */
  readonly cardinalityLimit?: number;
  /**
   * One or two per-request labels (a tenant, a priority class) on the request families: completions
   * and failures, e2e latency, audio TTFP, queue wait, token totals. Each reads its value from the
   * `generate` request (`from`) or a header on it (`header`), bounded by an allow-list (`values`)
   * and/or the first `maxValues` distinct values, every other value recorded as `other`. Default
   * none: the exposition is exactly vLLM-Omni's. See docs/tenant-labels.md.
   */
  readonly requestLabels?: readonly RequestLabelOptions[];
  /**
   * Service-level objectives per request, upper bounds: `firstOutputSeconds`, `e2eSeconds`,
   * `tpotSeconds`, `audioTtfpSeconds`, `audioRtf`, any of them (finite, above 0). Registers
   * `vllm:omni_requests_good_total` (finished successfully and met every objective that applies)
   * and `vllm:omni_slo_misses_total{objective}` (one per objective missed), with the request labels
   * of `requestLabels`: goodput and SLO attainment, live. The objectives shared with vLLM's
   * `--goodput` are judged as it judges them. Default none: neither family. See docs/goodput.md.
   */
  readonly slo?: SloOptions;
  /**
   * Real vLLM servers behind the pipeline: per (stage, replica), the server's `/metrics` URL (and
   * `engine` label, for data-parallel servers). Their `vllm:*` families are pulled, relabelled to
   * `stage` + `replica`, and served with the package's own, in `/metrics` and over OTLP; for these
   * replicas the pulled figures win over in-process ones. See docs/engine-pull.md.
   */
  readonly enginePull?: EnginePullOptions;
  /**
   * `'external'`: an SDK set up elsewhere (NodeSDK) will own the provider. This call creates no
   * provider and no push exporter; put `handle.prometheusReader` in NodeSDK's `metricReaders`,
   * `handle.views` in its `views` and `new OmniInstrumentation({ metrics: handle })` in its
   * `instrumentations` (see docs/node-sdk.md).
   *
   * Or bring your own provider: the package's families reach its readers through `OmniMetricProducer`s
   * (list them in `metricProducers`), and an `OmniPrometheusReader` among its readers, passed here
   * as `prometheusReader`, serves `metricsText()` and the built-in server. This call then neither
   * owns nor shuts the provider down.
   */
  readonly meterProvider?: ApiMeterProvider | 'external';
  /**
   * With `meterProvider` set: the `OmniPrometheusReader` among that provider's readers, which then serves the package's
   * families (`metricsText()`, the built-in server). Refused without `meterProvider`.
   */
  readonly prometheusReader?: OmniPrometheusReader;
  /** Periodic log line per (stage, replica) while `logStats` is on; default 10 s, 0 disables. */
  readonly logIntervalSeconds?: number;
  /** Where log lines go; default `console.info` / nowhere for debug. */
  readonly logSink?: LogSink;
  /**
   * The periodic self-check for silent families (default on, every 60 s): a family registered for
   * this configuration that receives nothing while requests flow is warned about through `diag`
   * and `logSink` once it stays silent for two checks, and summarised at `shutdown()`. `false`
   * turns the warning and summary off; `handle.selfCheck()` works either way.
   */
  readonly selfCheck?: false | SelfCheckOptions;
  /**
   * The standard `process_*` families as Python's prometheus_client prints them (CPU seconds,
   * resident and virtual memory, start time, open and max file descriptors) and Node.js runtime
   * families under prom-client's names (event loop lag, heap, external memory, active handles and
   * requests, GC durations, version info), first in `/metrics` as in vLLM's. Read right before
   * each scrape or export. Default on.
   */
  readonly processMetrics?: boolean;
  /**
   * Native (sparse exponential) histograms, for every histogram family (`true`) or those named in
   * `families`, with their schema, bucket limit and zero threshold. Such a family keeps its classic
   * buckets; `/metrics` also offers the Prometheus protobuf exposition, which carries both, to a
   * Prometheus that asks for it, and OTLP exports it as exponential histogram points. Default off:
   * see docs/native-histograms.md.
   */
  readonly nativeHistograms?: boolean | NativeHistogramOptions;
  /**
   * Keep exemplars on the latency histograms and request counters: per bucket (per series for a
   * counter) the latest observation's value, time, trace id and span id, printed in the
   * OpenMetrics exposition. Default: on once a tracer provider is registered globally (other than
   * the API's no-op one), before this call or after it (NodeSDK's `start()`): looked for at the
   * first record, and again after each scrape or export while there is none. See docs/exemplars.md.
   */
  readonly exemplars?: boolean;
}
