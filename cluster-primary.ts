import { serveClusterAggregate, type ClusterPrimary } from './exporters/cluster/cluster-primary';
import type { GaugeMerge } from './exporters/cluster/merge';
import { createdSeriesDisabledByEnv } from './exporters/exposition/exposition-text';
import { resolvePrometheusServerSettings, type PrometheusServerOptions } from './exporters/prometheus-http';
import type { OmniMetricsOptions } from './options';
import { resolveOmniSettings, type OmniSettings } from './settings';
import { checkBoolean, checked, checkObject, checkOneOf, checkPositiveNumber, optionKeys, OmniOptionError, shown } from './views/common/option-checks';

/** Options of `startClusterPrimary`. */
export interface ClusterPrimaryOptions {
  /**
   * The options every worker passes to `registerOmniMetrics`; pass the same object. The aggregate
   * announces the families they register (`modelName`, `logStats`, `requestLabels`, `slo`, custom
   * families, …) with their zero series before any worker reports. Checked as `registerOmniMetrics`
   * checks them: a bad one is refused as `workerOptions.<option>`.
   */
  readonly workerOptions: OmniMetricsOptions;
  /**
   * Serve the aggregate on its own port (default: `OTEL_EXPORTER_PROMETHEUS_HOST/PORT`, else
   * 127.0.0.1:9464), or `false` for no server (mount `handler()` instead).
   */
  readonly prometheus?: false | PrometheusServerOptions;
  /**
   * Print `<name>_created` for counter and histogram series (the earliest creation among the
   * workers). Default on, unless `PROMETHEUS_DISABLE_CREATED_SERIES` is `true`, `1` or `t`.
   */
  readonly createdSeries?: boolean;
  /** How long a scrape waits for each worker before using its last snapshot. Default 1000. */
  readonly collectTimeoutMillis?: number;
  /** Per exposed family name: how live workers' values of a gauge merge (see `startClusterPrimary`). */
  readonly gaugeMerge?: Readonly<Record<string, GaugeMerge>>;
}

const CLUSTER_PRIMARY_OPTION_KEYS = optionKeys<ClusterPrimaryOptions>({
  workerOptions: true,
  prometheus: true,
  createdSeries: true,
  collectTimeoutMillis: true,
  gaugeMerge: true,
});
const GAUGE_MERGES: readonly GaugeMerge[] = ['sum', 'max', 'min'];
const DEFAULT_COLLECT_TIMEOUT_MILLIS = 1000;

/**
 * The `cluster` primary's side of scale-out: `/metrics` serves the aggregate of every worker that
 * called `serveClusterWorker`, over the IPC channel (no shared files, no ports per worker).
 *
 * On each scrape every live worker is asked for its cumulative snapshot (a worker that does not
 * answer within `collectTimeoutMillis` contributes its last one), then:
 * - counters and histograms are summed per (name, label set) across live workers and every worker
 *   that exited, so counts never go backwards; each worker's latest snapshot replaces its previous
 *   one, and is added to the retired totals once, when it exits (a replacement worker has a new
 *   id and contributes afresh);
 * - gauges count only live workers: catalog gauges that count things (`{request}`, `{output}`
 *   units: running / waiting requests) are summed; other catalog gauges (`kv_cache_usage_perc`,
 *   `engine_sleep_state`) take the max; `_info` families are deduplicated (one series per label
 *   set, max value); gauges outside the catalog are summed. `gaugeMerge` overrides per family.
 *
 * Limits: what a worker recorded after its last snapshot is lost if it dies without a graceful
 * exit (SIGKILL, OOM, crash); the loss is bounded by its `syncIntervalMillis` (or the time since
 * the last scrape). A graceful exit that awaits `flush()` loses nothing.
 *
 * Many hosts: this aggregates the processes of one host only. Across hosts, let each process push
 * OTLP to an OpenTelemetry Collector (or let Prometheus scrape each instance) and aggregate there
 * (`sum by (...)` in PromQL, or the Collector's processors).
 */
export async function startClusterPrimary(options: ClusterPrimaryOptions): Promise<ClusterPrimary> {
  checkObject(options, 'startClusterPrimary options', CLUSTER_PRIMARY_OPTION_KEYS);
  const workers = workerSettings(options.workerOptions);
  checkBoolean(options.createdSeries, 'createdSeries');
  checkPositiveNumber(options.collectTimeoutMillis, 'collectTimeoutMillis');
  const gaugeMerge = options.gaugeMerge ?? {};
  if (typeof gaugeMerge !== 'object' || gaugeMerge === null || Array.isArray(gaugeMerge)) {
    throw new OmniOptionError('gaugeMerge', `gaugeMerge must be an object of family name → ${GAUGE_MERGES.join(' | ')}; got ${shown(gaugeMerge)}`);
  }
  for (const [name, merge] of Object.entries(gaugeMerge)) checkOneOf(merge, `gaugeMerge[${JSON.stringify(name)}]`, GAUGE_MERGES);
  return serveClusterAggregate({
    catalog: workers.catalog,
    modelName: workers.modelName,
    server: options.prometheus === false ? undefined : checked('prometheus', () => resolvePrometheusServerSettings(options.prometheus || {})),
    createdSeries: options.createdSeries ?? !createdSeriesDisabledByEnv(),
    collectTimeoutMillis: options.collectTimeoutMillis ?? DEFAULT_COLLECT_TIMEOUT_MILLIS,
    gaugeMerge,
  });
}

/** The workers' settings, resolved as `registerOmniMetrics` resolves them; what it refuses is named under `workerOptions`. */
function workerSettings(workerOptions: OmniMetricsOptions): OmniSettings {
  try {
    return resolveOmniSettings(workerOptions);
  } catch (error) {
    if (!(error instanceof OmniOptionError)) throw error;
    const option = error.option === '' || error.option === 'options' ? 'workerOptions' : `workerOptions.${error.option}`;
    throw new OmniOptionError(option, `workerOptions: ${error.message.replace(/^omni-otel-metrics: /, '')}`, { cause: error });
  }
}
