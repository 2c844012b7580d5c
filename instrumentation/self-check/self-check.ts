import type { ResolvedFamily } from '../../views/catalog/catalog';
import { replicaKey, type StageReplicaMap } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import { CounterSeries, type StoredSeries } from '../../views/store/series';
import { familySource, type FamilySource } from './family-sources';
import type { HostCallCounts } from './host-calls';
import { familyActivity, registrationBaseline } from './series-activity';
import type { HostMethod, SelfCheckReport, SilentFamily, SilenceReason, StageReplicaRef } from './types';

export interface SelfCheckSettings {
  readonly store: SeriesStore;
  readonly stageReplicaMap: StageReplicaMap;
  readonly logStats: boolean;
  readonly hostCalls: HostCallCounts;
  /** Replicas whose engine statistics come from their own server (`enginePull`), not from polls: never reported unpolled. */
  readonly pulledReplicas?: ReadonlyArray<{ readonly stage: number; readonly replica: number }>;
  /** Wall clock in milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/** Per family, across checks. */
interface FamilyState {
  lastObservedAt?: number;
  /** Checks in a row with requests flowing in which the family, while expected, received nothing. */
  silentChecks: number;
  /** Per `replicaKey(stage, replica)`: the check that last saw data for it (entries leave with their replica). */
  readonly replicas: Map<string, number>;
}

interface ReplicaState {
  /** Polled, or produced engine statistics, at some check. */
  active: boolean;
  polls: number;
  silentChecks: number;
}

/** Upstream families that change without any poll: set at start (sleep state, cache config). */
const NOT_POLL_EVIDENCE = new Set(['upstream.engineSleepState', 'upstream.cacheConfigInfo']);

/**
 * Finds registered families that received nothing while requests flowed. Each `check()` compares
 * the store's per-series totals with the previous check's (see `familyActivity`), so the record
 * path pays nothing; it keeps one number per series between checks.
 */
export class SilentFamilyCheck {
  private readonly families: readonly FamilyState[];
  private totals: Array<Map<StoredSeries, number>>;
  private readonly replicaStates = new Map<number, ReplicaState>();
  private audioProduced = false;
  private imageProduced = false;
  /** Stages whose request-driven families received data: more than one means requests crossed stages. */
  private readonly stagesReached = new Set<string>();
  private previousTraffic = 0;
  private readonly now: () => number;
  private readonly pulled: ReadonlySet<string>;

  constructor(private readonly settings: SelfCheckSettings) {
    this.now = settings.now ?? Date.now;
    this.pulled = new Set((settings.pulledReplicas ?? []).map(({ stage, replica }) => replicaKey(String(stage), String(replica))));
    // The baseline is the store as registration left it: eager zeros, engines reported awake.
    this.totals = settings.store.families.map(registrationBaseline);
    this.families = settings.store.families.map(() => ({ silentChecks: 0, replicas: new Map() }));
  }

  /** Runs one check: what arrived since the previous one, and what stayed silent while requests flowed. */
  check(): SelfCheckReport {
    const { store, hostCalls, stageReplicaMap } = this.settings;
    const checkedAt = this.now();
    const fed: boolean[] = [];
    const activeEngines = new Set<string>();
    store.families.forEach((family, i) => {
      const activity = familyActivity(family, this.totals[i] as Map<StoredSeries, number>);
      this.totals[i] = activity.totals;
      fed.push(activity.fed);
      const state = this.families[i] as FamilyState;
      if (activity.fed) state.lastObservedAt = checkedAt;
      for (const key of activity.fedReplicas) state.replicas.set(key, checkedAt);
      if (family.family.engineLabel && !NOT_POLL_EVIDENCE.has(family.family.key)) for (const key of activity.fedReplicas) activeEngines.add(key);
      if (activity.fed) {
        const source = familySource(family.family.key);
        if (source.expect === 'audio') this.audioProduced = true;
        if (source.expect === 'image') this.imageProduced = true;
        if (requestDriven(family.family.key, source)) for (const stage of activity.fedStages) this.stagesReached.add(stage);
      }
    });

    const successFamily = store.family('pipeline.requestsSuccess');
    let finished = 0;
    for (const series of successFamily?.series ?? []) if (series instanceof CounterSeries) finished += series.value;
    const started = Math.max(hostCalls.count('generate'), hostCalls.count('addRequest'));
    const traffic = finished + started;
    const requestsFlowed = traffic > this.previousTraffic;
    this.previousTraffic = traffic;

    const unpolledReplicas = this.checkReplicas(stageReplicaMap, activeEngines, requestsFlowed);
    const unpolledKeys = new Set(unpolledReplicas.map((ref) => replicaKey(ref.stage, ref.replica)));

    const silent: SilentFamily[] = [];
    store.families.forEach((family, i) => {
      const state = this.families[i] as FamilyState;
      const source = familySource(family.family.key);
      // A vLLM family is fed in-process only by replicas that are not pulled from their own server.
      const expected = this.expected(source) && this.enginesCanFeed(family.family, source) && !(family.family.engineLabel && this.allReplicasPulled());
      if (fed[i]) state.silentChecks = 0;
      else if (requestsFlowed && expected) state.silentChecks++;
      for (const key of state.replicas.keys()) if (stageReplicaMap.engineIndex(...stageReplicaOf(key)) === undefined) state.replicas.delete(key);
      if (!expected) return;
      if (state.silentChecks > 0) {
        silent.push(this.silentFamily(family.family, source, state));
      } else if (family.family.engineLabel && state.lastObservedAt !== undefined && unpolledKeys.size > 0) {
        // Data from some replicas; the ones never polled have none.
        const replicas = unpolledReplicas.filter((ref) => !state.replicas.has(replicaKey(ref.stage, ref.replica)));
        if (replicas.length > 0) silent.push(this.unpolledEntry(family.family, source, state, replicas));
      }
    });

    return {
      checkedAt,
      requestsObserved: Math.max(finished, started),
      requestsFlowed,
      hooksAttached: hostCalls.attached,
      silent,
      unpolledReplicas,
    };
  }

  /**
   * Wiring mistakes the first requests already show, each with its fix: undefined while no
   * request has been seen (nothing to decide yet), else the lines to warn (empty when all is well).
   * Cheap (a few counts, no walk over the store), so it can run early and often.
   */
  wiringMistakes(): string[] | undefined {
    const { hostCalls, logStats } = this.settings;
    const started = Math.max(hostCalls.count('generate'), hostCalls.count('addRequest'));
    if (started === 0) return undefined;
    const mistakes: string[] = [];
    if (!logStats) {
      mistakes.push(
        `${started === 1 ? 'a request is' : 'requests are'} flowing but logStats is off, so every vllm:omni_* family records nothing and no vllm:* family is registered: set logStats: true (vLLM's --log-stats)`,
      );
    }
    return mistakes;
  }

  private allReplicasPulled(): boolean {
    const entries = this.settings.stageReplicaMap.entries();
    return this.pulled.size > 0 && entries.every(([, { stage, replica }]) => this.pulled.has(replicaKey(stage, replica)));
  }

  private expected(source: FamilySource): boolean {
    switch (source.expect) {
      case 'always':
        return true;
      case 'audio':
        return this.audioProduced;
      case 'image':
        return this.imageProduced;
      case 'multi-stage':
        return this.requestsCrossedStages();
      default:
        return false;
    }
  }

  /**
   * Families fed through stage submissions and engine polls need engines (`stagePools`) or a
   * host that submits: a one-stage host without either could not have fed them.
   */
  private enginesCanFeed(family: ResolvedFamily, source: FamilySource): boolean {
    const { stageReplicaMap, hostCalls } = this.settings;
    const needsEngines = family.engineLabel || source.methods.includes('submitToStage') || source.methods.includes('pollEngine');
    if (!needsEngines) return true;
    if (stageReplicaMap.entries().length > 0) return true;
    return !family.engineLabel && hostCalls.count('submitToStage') > 0;
  }

  /**
   * Whether some request went past its first stage: a transfer was sent or received, or request
   * data arrived for more than one stage. A text-only request that ends at the thinker has no
   * cross-stage hop, whatever the number of stages.
   */
  private requestsCrossedStages(): boolean {
    const { hostCalls } = this.settings;
    return this.stagesReached.size > 1 || hostCalls.count('sendToNextStage') > 0 || hostCalls.count('receiveFromPreviousStage') > 0;
  }

  /** Replicas that were never polled (hooks) and never produced engine statistics, once requests flowed since they joined. */
  private checkReplicas(map: StageReplicaMap, activeEngines: ReadonlySet<string>, requestsFlowed: boolean): StageReplicaRef[] {
    const entries = map.entries();
    const present = new Set(entries.map(([engineIndex]) => engineIndex));
    for (const engineIndex of this.replicaStates.keys()) if (!present.has(engineIndex)) this.replicaStates.delete(engineIndex);
    const unpolled: StageReplicaRef[] = [];
    const firstStage = entries[0]?.[1].stage;
    for (const [engineIndex, { stage, replica }] of entries) {
      let state = this.replicaStates.get(engineIndex);
      if (state === undefined) {
        state = { active: false, polls: 0, silentChecks: 0 };
        this.replicaStates.set(engineIndex, state);
      }
      if (this.pulled.has(replicaKey(stage, replica))) continue;
      // Every request starts at the first stage; a later one is owed polls only once requests reach it.
      if (stage !== firstStage && !this.stagesReached.has(stage)) continue;
      const polls = this.settings.hostCalls.pollsOf(engineIndex);
      if (polls > state.polls || activeEngines.has(replicaKey(stage, replica))) state.active = true;
      state.polls = polls;
      if (state.active) continue;
      if (requestsFlowed) state.silentChecks++;
      if (state.silentChecks > 0) unpolled.push({ stage, replica });
    }
    return unpolled;
  }

  private silentFamily(family: ResolvedFamily, source: FamilySource, state: FamilyState): SilentFamily {
    const { reason, detail, method } = this.reasonFor(family, source);
    return {
      name: family.name,
      reason,
      source: sourceText(source),
      detail,
      ...(method === undefined ? {} : { method }),
      silentChecks: state.silentChecks,
      ...(state.lastObservedAt === undefined ? {} : { lastObservedAt: state.lastObservedAt }),
    };
  }

  private unpolledEntry(family: ResolvedFamily, source: FamilySource, state: FamilyState, replicas: StageReplicaRef[]): SilentFamily {
    const states = replicas.map((ref) => this.replicaStates.get(this.settings.stageReplicaMap.engineIndex(Number(ref.stage), Number(ref.replica)) ?? -1));
    return {
      name: family.name,
      reason: 'replica-not-polled',
      source: sourceText(source),
      detail: `no data from ${replicas.map(replicaText).join(', ')}: never polled while requests flowed (pollEngine(stage, replica) never called for it, or its polls carried no statistics)`,
      silentChecks: Math.max(...states.map((replicaState) => replicaState?.silentChecks ?? 0)),
      ...(state.lastObservedAt === undefined ? {} : { lastObservedAt: state.lastObservedAt }),
      replicas,
    };
  }

  private reasonFor(family: ResolvedFamily, source: FamilySource): { reason: SilenceReason; detail: string; method?: HostMethod } {
    const { hostCalls, logStats } = this.settings;
    if (!logStats && family.group === 'pipeline') {
      return {
        reason: 'log-stats-off',
        detail: "logStats is off, so the pipeline recorders drop every observation (vLLM-Omni's log_stats gating): set logStats: true",
      };
    }
    if (hostCalls.wereAttached) {
      const missing = source.methods.find((method) => hostCalls.count(method) === 0);
      if (missing !== undefined) {
        const hooks = hostCalls.attached ? 'the hooks are attached' : 'the hooks were attached (they are detached now)';
        return { reason: 'host-method-not-called', method: missing, detail: `${hooks} but ${notCalledCause(missing, hostCalls)}` };
      }
      const calls = source.methods.map((method) => `${method} ×${hostCalls.count(method)}`).join(', ');
      return {
        reason: 'no-data-from-source',
        detail: `${calls} called, yet nothing reached the family: check ${source.via} (missing, discarded or throttled)`,
      };
    }
    return {
      reason: 'no-data-from-source',
      detail: `nothing reached its recorder and no OmniInstrumentation hooks feed this handle: it comes from ${source.via}`,
    };
  }
}

/**
 * Why `method` was never seen called. A method the host holds from before the hooks were attached
 * (bound or destructured: `const generate = serving.generate.bind(serving)`) calls the original,
 * which the hooks never see: when the orchestrator's addRequest was called and generate never was,
 * that is the cause, since generate is what adds a served request.
 */
function notCalledCause(method: HostMethod, hostCalls: HostCallCounts): string {
  const boundBefore = `a ${method} bound or copied before the hooks were attached (\`const ${method} = host.${method}.bind(host)\`, a destructured method) calls the original, which the hooks never see: create the OmniInstrumentation before the host binds its methods`;
  const requestsAdded = hostCalls.count('addRequest');
  if (method === 'generate' && requestsAdded > 0) return `generate was never called through them while addRequest was (×${requestsAdded}): ${boundBefore}`;
  return `${method} was never called (nor its diagnostics channel published): the host class has no ${method}, or never calls it, or ${boundBefore}`;
}

/** Upstream histograms observed at every engine step, a step without requests included. */
const PER_STEP_FAMILIES = new Set(['upstream.iterationTokensTotal']);

/** Families each request feeds at the stages it reaches (not those an idle engine's polls feed). */
function requestDriven(key: string, source: FamilySource): boolean {
  return source.expect !== 'event' && source.expect !== 'snapshot' && source.methods[0] !== 'pollEngine' && !PER_STEP_FAMILIES.has(key);
}

function sourceText(source: FamilySource): string {
  return source.methods.length === 0 ? source.via : `${source.methods.join(' + ')}: ${source.via}`;
}

function replicaText(ref: StageReplicaRef): string {
  return `stage ${ref.stage} replica ${ref.replica}`;
}

function stageReplicaOf(key: string): [number, number] {
  const [stage, replica] = key.split('/');
  return [Number(stage), Number(replica)];
}
