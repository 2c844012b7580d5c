import { packageDiag } from '../../views/common/package-diag';
import { EngineRelabelProcessor } from '../../views/engine-relabel-processor';
import { WarnOnce } from '../../views/common/diag-warnings';
import { redactedUrl, withUrlsRedacted } from '../../views/common/redaction';
import { replicaKey, type StageReplicaMap } from '../../views/stage-replica-map';
import { EMPTY_SNAPSHOT, type ClusterSnapshot, type SnapshotMetric, type SnapshotPoint } from '../snapshot';
import { EngineConnections, EnginePullError } from './engine-fetch';
import type { EnginePullSettings, ResolvedEngineTarget } from './engine-pull-settings';
import { nextSlice, sliceDue } from '../event-loop-slices';
import { engineSnapshot, PullWarnings, SeriesBudget } from './engine-snapshot';
import { PulledFamilies } from './pulled-families';
import { ExpositionParseError, parseExpositionInSlices } from './exposition-parser';
import type { ParsedFamily, ParsedSample } from '../parsed-family';
import { FamilyNames, type OwnFamily } from './family-names';
import type { ScrapeUpFamily } from '../../views/catalog/scrape-up-family';

/** The outcome of one pull of every engine. */
export interface PulledEngines {
  /** Every kept family of every engine that answered, and the scrape-up gauge, as one cumulative snapshot. */
  readonly snapshot: ClusterSnapshot;
  /**
   * `stage/replica` of every replica whose engine is pulled, answering or not: the in-process
   * series of these replicas in `vllm:*` families are left out (the pulled ones win).
   */
  readonly replicas: ReadonlySet<string>;
  /** The same families as exposition families, built once per pull for every scrape until the next. */
  readonly families: PulledFamilies;
}

/** What the pulled families must fit beside: the package's own families and its series bound. */
export interface PulledFamilyBounds {
  /** The families the package prints itself (the store's): a pulled family joins one of them or stays clear of its names. */
  readonly ownFamilies: readonly OwnFamily[];
  /** Series per family, as the store's `cardinalityLimit`. */
  readonly cardinalityLimit: number;
}

/** Stored series per engine, over all its families, as a multiple of the per-family limit (vLLM prints about 50 families). */
const FAMILIES_PER_ENGINE = 16;

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
 *
 * `timeoutMillis` bounds the whole pull of a URL, fetch and parse: the body (at most
 * `maxResponseBytes`) is parsed in slices of a few milliseconds with the event loop free in
 * between, and a parse still running at the deadline counts as a failed pull. Memory: the body
 * while it is parsed, and at most `cardinalityLimit` series per family and 16 × `cardinalityLimit`
 * series per engine of the families kept (everything else is checked and not stored).
 */
export class EnginePuller {
  private readonly connections = new EngineConnections();
  private readonly relabel: EngineRelabelProcessor;
  /**
   * One warning per URL and kind of failure, said again only after the URL answered: every engine
   * that is down is named, once per outage. Bounded by the configured URLs times the kinds of failure.
   */
  private readonly failures = new WarnOnce(Infinity);
  /** The failure keys said for each URL in its current outage, forgotten when it answers. */
  private readonly outages = new Map<string, Set<string>>();
  private readonly warnings = new PullWarnings();
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
    private readonly bounds: PulledFamilyBounds,
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
    if (this.stopped) return Promise.resolve(cached?.result ?? nothingPulled());
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
        packageDiag.error('omni-otel-metrics: engine pull failed', error);
        return nothingPulled();
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
    const targetsByUrl = new Map<string, ResolvedEngineTarget[]>();
    for (const { target } of active) targetsByUrl.set(target.url.href, [...(targetsByUrl.get(target.url.href) ?? []), target]);
    const parsed = new Map<string, EngineFamilies | undefined>();
    await Promise.all(
      [...targetsByUrl].map(async ([href, targets]) => {
        const families = await this.fetchFamilies(new URL(href), targets);
        parsed.set(href, families === undefined ? undefined : await byEngine(families));
      }),
    );
    const firstSeen = new Map<string, number>();
    const nowSeconds = this.now() / 1000;
    const names = new FamilyNames(this.bounds.ownFamilies);
    // Never taken from an engine, whatever it prints: the package's own gauge.
    names.claim(this.upFamily.name, 'gauge');
    const budget = new SeriesBudget(this.bounds.cardinalityLimit);
    const joined = new Map<string, { metric: SnapshotMetric; points: SnapshotPoint[] }>();
    const model = new PulledFamilies();
    const up = new Map<string, number>();
    // In configuration order, whichever URL answered first: series keep their place from scrape to scrape.
    for (const { target, engineIndex } of active) {
      // Each engine's families are a few milliseconds of work; hundreds of engines yield to the host in between.
      if (sliceDue()) await nextSlice();
      const pulled = parsed.get(target.url.href);
      const key = replicaKey(target.stage, target.replica);
      up.set(key, pulled === undefined ? 0 : 1);
      if (pulled === undefined) continue;
      const families = pulled.get(target.engine) ?? pulled.get(undefined) ?? [];
      const metrics = engineSnapshot(families, {
        engine: target.engine,
        source: `engine ${target.engine} of ${redactedUrl(target.url)}`,
        names,
        budget,
        warnings: this.warnings,
        engineIndex,
        relabel: this.relabel,
        keep: (name) => this.keepsFamily(name),
        firstSeen: (seriesKey) => {
          const seenKey = `${key} ${seriesKey}`;
          const seen = this.firstSeen.get(seenKey) ?? firstSeen.get(seenKey) ?? nowSeconds;
          firstSeen.set(seenKey, seen);
          return seen;
        },
      });
      model.add(metrics);
      // The engines' families join by name: the names check made them one kind, their label sets never collide (stage/replica differ).
      for (const metric of metrics) {
        const entry = joined.get(metric.name);
        if (entry === undefined) joined.set(metric.name, { metric, points: [...metric.points] });
        else entry.points.push(...metric.points);
      }
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
    const snapshot: ClusterSnapshot = { metrics: [...[...joined.values()].map(({ metric, points }) => ({ ...metric, points })), upMetric] };
    model.add([upMetric]);
    const result: PulledEngines = { snapshot, replicas: new Set(active.map(({ target }) => replicaKey(target.stage, target.replica))), families: model };
    if (!this.stopped) this.cached = { atMillis: this.now(), mapVersion, result };
    return result;
  }

  /** The parsed exposition of `url` (serving the replicas of `targets`), or undefined when it could not be fetched or parsed in time. */
  private async fetchFamilies(url: URL, targets: readonly ResolvedEngineTarget[]): Promise<ParsedFamily[] | undefined> {
    const engines = targets.length;
    const deadlineMillis = this.now() + this.settings.timeoutMillis;
    try {
      const text = await this.connections.get(url, this.settings.timeoutMillis, this.settings.maxResponseBytes);
      const limit = this.bounds.cardinalityLimit;
      const families = await parseExpositionInSlices(
        text,
        {
          keep: (name) => this.keeps(name),
          maxSeriesPerFamily: limit * engines,
          maxSeries: limit * FAMILIES_PER_ENGINE * engines,
          unused: (name, type) =>
            this.warnings.unsupported.warn(`${name} of ${redactedUrl(url)} is an OpenMetrics ${type}; engine pull passes counters, gauges and histograms only`),
        },
        { deadlineMillis, now: this.now },
      );
      this.answered(url);
      return families;
    } catch (error) {
      if (!this.stopped) this.warnFailure(url, targets, error);
      return undefined;
    }
  }

  /** Says why `url` was not served, once per kind of failure until it answers again, naming the replicas it leaves down. */
  private warnFailure(url: URL, targets: readonly ResolvedEngineTarget[], error: unknown): void {
    const reason = error instanceof EnginePullError ? error.reason : error instanceof ExpositionParseError ? 'unparsable' : 'not parsed in time';
    const key = `${url.href}\u0000${reason}`;
    let said = this.outages.get(url.href);
    if (said === undefined) this.outages.set(url.href, (said = new Set()));
    said.add(key);
    const replicas = targets.map((target) => `stage ${target.stage} replica ${target.replica}`).join(', ');
    const message = withUrlsRedacted(error instanceof Error ? error.message : String(error));
    this.failures.warn(key, `engine metrics at ${redactedUrl(url)} not served (${message}): ${this.upFamily.name} is 0 for ${replicas} until it answers`);
  }

  /** `url` answered: a later failure is news again. */
  private answered(url: URL): void {
    const said = this.outages.get(url.href);
    if (said === undefined) return;
    for (const key of said) this.failures.forget(key);
    this.outages.delete(url.href);
  }

  /** Families served: every `vllm:*` one, and those listed. */
  private keepsFamily(name: string): boolean {
    return name.startsWith('vllm:') || this.settings.passThrough.has(name);
  }

  /** Families stored while parsing: those served, and the `_created` gauge families that carry their start times. */
  private keeps(name: string): boolean {
    if (this.keepsFamily(name)) return true;
    if (!name.endsWith('_created')) return false;
    const stem = name.slice(0, -'_created'.length);
    return this.keepsFamily(stem) || this.keepsFamily(`${stem}_total`);
  }
}

function nothingPulled(): PulledEngines {
  return { snapshot: EMPTY_SNAPSHOT, replicas: new Set(), families: new PulledFamilies() };
}

/** One URL's families split by their `engine` label value: samples without one belong to every engine (key `undefined` holds only those). */
type EngineFamilies = Map<string | undefined, ParsedFamily[]>;

/**
 * Splits a data-parallel server's families by engine once per pull, so each of its engines reads
 * only its own samples (and those without an `engine` label) instead of every engine's.
 */
async function byEngine(families: readonly ParsedFamily[]): Promise<EngineFamilies> {
  const engines = new Set<string>();
  for (const family of families) {
    for (const sample of family.samples) if (sample.labels.engine !== undefined) engines.add(sample.labels.engine);
    if (sliceDue()) await nextSlice();
  }
  const split: EngineFamilies = new Map([[undefined, [] as ParsedFamily[]], ...[...engines].map((engine) => [engine, [] as ParsedFamily[]] as const)]);
  for (const family of families) {
    const samples = new Map<string | undefined, ParsedSample[]>([...split.keys()].map((engine) => [engine, []]));
    for (const sample of family.samples) {
      const engine = sample.labels.engine;
      if (engine !== undefined) samples.get(engine)?.push(sample);
      else for (const list of samples.values()) list.push(sample);
    }
    for (const [engine, list] of samples) if (list.length > 0 || family.samples.length === 0) split.get(engine)?.push({ ...family, samples: list });
    if (sliceDue()) await nextSlice();
  }
  return split;
}
