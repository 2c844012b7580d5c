import { packageDiag } from '../../views/common/package-diag';
import cluster, { type Worker } from 'node:cluster';
import { declaredFamilies } from '../../views/declared-families';
import type { ResolvedCatalog, ResolvedFamily } from '../../views/catalog/catalog';
import { createMetricsHandler, type MetricsMiddleware, type MetricsTextSource } from '../metrics-handler';
import type { ScrapeAuth } from '../scrape-auth';
import { serveMetrics, type PrometheusServer, type PrometheusServerSettings } from '../prometheus-http';
import { renderRequest, type ExpositionFormat, type RenderKey } from '../exposition/exposition-text';
import type { DeclaredFamily } from '../../views/declared-families';
import { withDeclared } from '../exposition/declared';
import { exposedFamilies } from '../exposition/exposed-families';
import type { ExpositionFamily } from '../exposition/model';
import { protobufExposition } from '../exposition/protobuf-writer';
import { snapshotFamilies } from '../exposition/snapshot-families';
import { textExposition } from '../exposition/text-writer';
import { SharedRenderings, type ExpositionPieces } from '../shared-rendering';
import { mergeSnapshots, retireSnapshot, type GaugeMerge, type GaugeMergePolicy } from './merge';
import { isProtocolMessage, type ProtocolMessage, type SnapshotMessage } from './protocol';
import { EMPTY_SNAPSHOT, type ClusterSnapshot, type SnapshotHistogram } from '../snapshot';
import { SnapshotChecker } from './snapshot-check';
import { WarnOnce } from '../../views/common/diag-warnings';

/** A cluster primary's settings, checked (the public options are `ClusterPrimaryOptions`). */
export interface ClusterAggregateSettings {
  /** The catalog the workers register, so the aggregate announces their families before they report. */
  readonly catalog: ResolvedCatalog;
  readonly modelName: string;
  readonly server: PrometheusServerSettings | undefined;
  readonly createdSeries: boolean;
  readonly collectTimeoutMillis: number;
  readonly gaugeMerge: Readonly<Record<string, GaugeMerge>>;
}

/** The running aggregate `startClusterPrimary` returns. */
export interface ClusterPrimary {
  /** The aggregate a scrape would receive: asks every live worker first. */
  metricsText(format?: ExpositionFormat): Promise<string>;
  /** A handler to mount the aggregate's `/metrics` on the host's own server. */
  handler(pathOrOptions?: string | { readonly path?: string; readonly auth?: ScrapeAuth }): MetricsMiddleware;
  /** The built-in server, unless `prometheus: false`. */
  readonly server?: PrometheusServer;
  /** Stops listening to workers and closes the server; workers are left running. */
  stop(): Promise<void>;
}

const listenerFailures = new WarnOnce();

interface LiveWorker {
  snapshot: ClusterSnapshot;
  seq: number;
}

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
export async function serveClusterAggregate(settings: ClusterAggregateSettings): Promise<ClusterPrimary> {
  if (!cluster.isPrimary) throw new Error('startClusterPrimary must run in the cluster primary (cluster.isPrimary)');
  const { catalog, server: serverSettings } = settings;
  const aggregate = new ClusterAggregate(
    new SnapshotChecker(catalog),
    declaredFamilies(catalog, settings.modelName),
    gaugeMergePolicy(catalog, settings.gaugeMerge),
    settings.collectTimeoutMillis,
    settings.createdSeries,
  );

  let server: PrometheusServer | undefined;
  if (serverSettings !== undefined) {
    try {
      server = await serveMetrics(aggregate, serverSettings);
    } catch (error) {
      aggregate.stop();
      throw error;
    }
  }
  return {
    metricsText: (format = 'text') => aggregate.metricsText(format),
    handler: (pathOrOptions) => createMetricsHandler(aggregate, pathOrOptions),
    server,
    stop: async () => {
      aggregate.stop();
      await server?.close();
    },
  };
}

/** Worker bookkeeping and the merge; listens on `cluster` from construction until `stop()`. */
class ClusterAggregate implements MetricsTextSource {
  private readonly live = new Map<number, LiveWorker>();
  /** Ids of workers already folded into `retired`: a late message from one is not stored again. */
  private readonly retiredIds = new Set<number>();
  /** Connected workers that never answered: not asked again until they send a snapshot themselves. */
  private readonly silentIds = new Set<number>();
  private retired: ClusterSnapshot = EMPTY_SNAPSHOT;
  /** Set once a worker's snapshot carried native buckets. */
  private nativeSeen = false;
  private readonly pending = new Map<number, () => void>();
  private nextRequestId = 1;

  // Listeners on `cluster` run in the host's primary: whatever a worker sends or does, they never throw.
  private readonly onMessage = (worker: Worker, message: unknown): void => {
    try {
      if (!isProtocolMessage(message) || message.type !== 'snapshot') return;
      this.store(worker, message);
      if (message.requestId !== undefined) this.pending.get(message.requestId)?.();
      if (message.ackId !== undefined) this.send(worker, { omniOtelMetrics: 1, type: 'ack', ackId: message.ackId });
    } catch (error) {
      listenerFailures.warn('message', "a cluster worker's message could not be handled; it is ignored", error);
    }
  };

  private readonly onGone = (worker: Worker): void => {
    try {
      if (this.retiredIds.has(worker.id)) return;
      this.retiredIds.add(worker.id);
      this.silentIds.delete(worker.id);
      const entry = this.live.get(worker.id);
      if (entry === undefined) return;
      this.live.delete(worker.id);
      this.retired = retireSnapshot(this.retired, entry.snapshot);
    } catch (error) {
      listenerFailures.warn('exit', "an exited cluster worker's counts could not be kept", error);
    }
  };

  constructor(
    private readonly checker: SnapshotChecker,
    private readonly declared: readonly DeclaredFamily[],
    private readonly policy: GaugeMergePolicy,
    private readonly collectTimeoutMillis: number,
    private readonly createdSeries: boolean,
  ) {
    cluster.on('message', this.onMessage);
    cluster.on('disconnect', this.onGone);
    cluster.on('exit', this.onGone);
  }

  /** Every rendering of the aggregate, scrapes and `metricsText()` alike, per format and name escaping: those that overlap share one. */
  readonly sharedRenderings = new SharedRenderings((key: RenderKey) => this.exposition(key));

  metricsText(format: ExpositionFormat = 'text'): Promise<string> {
    return this.sharedRenderings.rendering(format, false).text();
  }

  /** Whether a scraper preferring protobuf gets it: once a worker sent native buckets, which only that format carries. */
  offersProtobuf(): boolean {
    return this.nativeSeen;
  }

  /**
   * Asks the live workers for fresh snapshots, merges them with the retired counts, and writes the
   * merge as any exposition is written: the catalog's families first, then the workers' own
   * instruments (left out when their names collide with a family printed before them).
   */
  private async exposition(key: RenderKey): Promise<ExpositionPieces> {
    await this.collectLive();
    const merged = mergeSnapshots(
      this.retired,
      [...this.live.values()].map((entry) => entry.snapshot),
      this.policy,
    );
    const all = aggregateFamilies(merged, this.declared);
    const { format, escaping } = renderRequest(key);
    const createdSeries = this.createdSeries;
    return format === 'protobuf' ? protobufExposition(all, { createdSeries, escaping }) : textExposition(all, { format, createdSeries, escaping });
  }

  stop(): void {
    cluster.off('message', this.onMessage);
    cluster.off('disconnect', this.onGone);
    cluster.off('exit', this.onGone);
    for (const settle of [...this.pending.values()]) settle();
  }

  private store(worker: Worker, message: SnapshotMessage): void {
    if (this.retiredIds.has(worker.id)) return;
    this.silentIds.delete(worker.id);
    const entry = this.live.get(worker.id);
    if (entry !== undefined && message.seq <= entry.seq) return;
    // Only the well-formed points are kept, so the merge, a scrape and the worker's exit cannot fail on them.
    const { snapshot } = this.checker.check(message.snapshot, String(worker.id));
    this.nativeSeen ||= carriesNativeBuckets(snapshot);
    if (entry === undefined) {
      this.live.set(worker.id, { snapshot, seq: message.seq });
    } else {
      // Cumulative: the newer snapshot replaces the previous one, never adds to it.
      entry.snapshot = snapshot;
      entry.seq = message.seq;
    }
  }

  /**
   * Asks every connected worker at once (also those forked before this primary started listening,
   * whose announcement it missed); each answer or timeout settles its own request.
   */
  private async collectLive(): Promise<void> {
    const workers = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined && worker.isConnected() && !this.silentIds.has(worker.id),
    );
    await Promise.all(workers.map((worker) => this.request(worker)));
  }

  private request(worker: Worker): Promise<void> {
    return new Promise((resolve) => {
      const requestId = this.nextRequestId++;
      const timeout = setTimeout(() => {
        if (this.live.has(worker.id)) {
          packageDiag.debug(`omni-otel-metrics: cluster worker ${worker.id} did not answer within ${this.collectTimeoutMillis} ms; using its last snapshot`);
        } else {
          // Not serving snapshots (yet): skip it until it announces itself.
          this.silentIds.add(worker.id);
        }
        settle();
      }, this.collectTimeoutMillis);
      timeout.unref();
      const settle = (): void => {
        clearTimeout(timeout);
        this.pending.delete(requestId);
        resolve();
      };
      this.pending.set(requestId, settle);
      this.send(worker, { omniOtelMetrics: 1, type: 'collect', requestId }, settle);
    });
  }

  private send(worker: Worker, message: ProtocolMessage, onError?: () => void): void {
    try {
      worker.send(message, (error) => {
        if (error) onError?.();
      });
    } catch {
      onError?.();
    }
  }
}

/**
 * The merged snapshot as the primary serves it: the catalog's families first (with their zero
 * series while no worker reported them), then the workers' own instruments, left out when their
 * names collide with a family printed before them.
 */
export function aggregateFamilies(merged: ClusterSnapshot, declared: readonly DeclaredFamily[]): ExpositionFamily[] {
  const families = withDeclared(snapshotFamilies(merged), declared);
  return exposedFamilies({ own: families.slice(0, declared.length), application: families.slice(declared.length) });
}

function carriesNativeBuckets(snapshot: ClusterSnapshot): boolean {
  return snapshot.metrics.some(
    (metric) => metric.kind === 'histogram' && metric.points.some((point) => (point.value as SnapshotHistogram).native !== undefined),
  );
}

/** The default gauge merges of `startClusterPrimary`, with per-family overrides. */
export function gaugeMergePolicy(catalog: ResolvedCatalog, overrides: Readonly<Record<string, GaugeMerge>>): GaugeMergePolicy {
  const byStream = new Map<string, ResolvedFamily>();
  for (const family of catalog.families) {
    byStream.set(family.name, family);
    byStream.set(family.otelName, family);
  }
  return ({ name }) => {
    const family = byStream.get(name);
    const exposed = family?.name ?? name;
    const override = overrides[exposed] ?? overrides[name];
    if (override !== undefined) return override;
    if (exposed.endsWith('_info')) return 'max';
    if (family === undefined) return 'sum';
    return family.clusterMerge ?? (/^\{[^{}]+\}$/.test(family.unit) ? 'sum' : 'max');
  };
}
