import { diag } from '@opentelemetry/api';
import { EngineRelabelProcessor } from '../../views/engine-relabel-processor';
import { LimitedWarning } from '../../views/diag-warnings';
import { replicaKey, type StageReplicaMap } from '../../views/stage-replica-map';
import { EMPTY_SNAPSHOT, mergeSnapshots } from '../cluster/merge';
import type { ClusterSnapshot, SnapshotMetric } from '../cluster/snapshot';
import { EngineConnections } from './engine-fetch';
import type { EnginePullSettings } from './engine-pull-settings';
import { engineSnapshot } from './engine-snapshot';
import { parseExposition, type ParsedFamily } from './exposition-parser';
import type { ScrapeUpFamily } from '../../views/scrape-up-family';

/** The outcome of one pull of every engine. */
export interface PulledEngines {
  /** Every kept family of every engine that answered, and the scrape-up gauge, as one cumulative snapshot. */
  readonly snapshot: ClusterSnapshot;
  /**
   * `stage/replica` of every replica whose engine is pulled, answering or not: the in-process
   * series of these replicas in `vllm:*` families are left out (the pulled ones win).
   */
  readonly replicas: ReadonlySet<string>;
}

interface CachedPull {
  readonly atMillis: number;
  readonly mapVersion: number;
  readonly result: PulledEngines;
}

/**
 * Pulls the configured engines' expositions: every URL once per pull (a data-parallel server's
 * engines share one request), all URLs at once, each bounded by `timeoutMillis`. A pull younger
 * than `cacheMillis` is served again; pulls that overlap share one. With `intervalMillis`, a
 * background timer pulls and readers take the latest. Never rejects: an engine that fails is
 * reported as down (`engine_scrape_up` 0) and its series are absent from that pull on.
 */
export class EnginePuller {
  private readonly connections = new EngineConnections();
  private readonly relabel: EngineRelabelProcessor;
  private readonly failures = new LimitedWarning();
  private cached: CachedPull | undefined;
  private inFlight: Promise<PulledEngines> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Start times of series printed without `_created`, kept only while the series is seen (bounded by the last pull). */
  private firstSeen = new Map<string, number>();

  constructor(
    private readonly settings: EnginePullSettings,
    private readonly map: StageReplicaMap,
    private readonly upFamily: ScrapeUpFamily,
    private readonly now: () => number = Date.now,
  ) {
    this.relabel = new EngineRelabelProcessor(map);
  }

  /** Starts the background pulls when `intervalMillis` is set; otherwise pulls happen on demand. */
  start(): void {
    if (this.stopped || this.timer !== undefined || this.settings.intervalMillis === 0) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.settings.intervalMillis);
    this.timer.unref();
  }

  /** Stops the timer and closes every connection; later calls of `latest()` pull nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.connections.destroy();
  }

  /** What a scrape or export should serve now: the cached pull while fresh, else a new one. */
  latest(): Promise<PulledEngines> {
    const cached = this.cached;
    if (this.stopped) return Promise.resolve(cached?.result ?? { snapshot: EMPTY_SNAPSHOT, replicas: new Set() });
    const fresh =
      cached !== undefined &&
      cached.mapVersion === this.map.version &&
      (this.settings.intervalMillis > 0 || this.now() - cached.atMillis < this.settings.cacheMillis);
    if (fresh) return Promise.resolve(cached.result);
    return this.refresh();
  }

  /** One pull of every engine, shared by whoever asks while it runs. */
  refresh(): Promise<PulledEngines> {
    this.inFlight ??= this.pullAll()
      .catch((error: unknown) => {
        // Not expected (each URL's failure is handled); the host's scrape must not fail anyway.
        diag.error('omni-otel-metrics: engine pull failed', error);
        return { snapshot: EMPTY_SNAPSHOT, replicas: new Set<string>() };
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async pullAll(): Promise<PulledEngines> {
    const mapVersion = this.map.version;
    const active = this.settings.targets.flatMap((target) => {
      const engineIndex = this.map.engineIndex(target.stage, target.replica);
      // A replica removed while serving is not pulled (nor served) until it is added back.
      return engineIndex === undefined ? [] : [{ target, engineIndex }];
    });
    const byUrl = new Set(active.map(({ target }) => target.url.href));
    const parsed = new Map<string, ParsedFamily[] | undefined>();
    await Promise.all([...byUrl].map(async (href) => parsed.set(href, await this.fetchFamilies(new URL(href)))));
    const firstSeen = new Map<string, number>();
    const nowSeconds = this.now() / 1000;
    const perEngine: ClusterSnapshot[] = [];
    const up = new Map<string, number>();
    // In configuration order, whichever URL answered first: series keep their place from scrape to scrape.
    for (const { target, engineIndex } of active) {
      const families = parsed.get(target.url.href);
      const key = replicaKey(target.stage, target.replica);
      up.set(key, families === undefined ? 0 : 1);
      if (families === undefined) continue;
      const metrics = engineSnapshot(families, {
        engine: target.engine,
        engineIndex,
        relabel: this.relabel,
        keep: (name) => name.startsWith('vllm:') || this.settings.passThrough.has(name),
        firstSeen: (seriesKey) => {
          const seenKey = `${key} ${seriesKey}`;
          const seen = this.firstSeen.get(seenKey) ?? firstSeen.get(seenKey) ?? nowSeconds;
          firstSeen.set(seenKey, seen);
          return seen;
        },
      });
      perEngine.push({ metrics });
    }
    this.firstSeen = firstSeen;
    const upMetric: SnapshotMetric = {
      name: this.upFamily.name,
      kind: 'gauge',
      description: this.upFamily.help,
      unit: '',
      points: active.map(({ target }) => ({
        attributes: { stage: String(target.stage), replica: String(target.replica) },
        value: up.get(replicaKey(target.stage, target.replica)) ?? 0,
      })),
    };
    // The cluster merge joins the engines' families by name; their label sets never collide (stage/replica differ).
    const snapshot = mergeSnapshots(EMPTY_SNAPSHOT, [...perEngine, { metrics: [upMetric] }], () => 'max');
    const result: PulledEngines = { snapshot, replicas: new Set(active.map(({ target }) => replicaKey(target.stage, target.replica))) };
    if (!this.stopped) this.cached = { atMillis: this.now(), mapVersion, result };
    return result;
  }

  /** The parsed exposition of `url`, or undefined when it could not be fetched or parsed. */
  private async fetchFamilies(url: URL): Promise<ParsedFamily[] | undefined> {
    try {
      const text = await this.connections.get(url, this.settings.timeoutMillis, this.settings.maxResponseBytes);
      return parseExposition(text);
    } catch (error) {
      this.failures.warn(`engine metrics at ${url.href} not served this time: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
}
