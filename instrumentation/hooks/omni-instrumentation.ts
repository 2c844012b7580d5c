import type { MeterProvider } from '@opentelemetry/api';
import { isAbsolute, parse } from 'node:path';
import {
  InstrumentationBase,
  InstrumentationNodeModuleDefinition,
  InstrumentationNodeModuleFile,
  type InstrumentationConfig,
  type InstrumentationModuleDefinition,
} from '@opentelemetry/instrumentation';
import type { InstrumentedMetrics } from './instrumented-metrics';
import type { OmniRecorders } from '../recorders/recorders';
import { GEN_AI_METER_NAME, OmniGenAiMetrics } from '../recorders/gen-ai-metrics';
import { WarnOnce } from '../../views/common/diag-warnings';
import { packageDiag } from '../../views/common/package-diag';
import { checkArray, checkBoolean, checkObject, checkPositiveInteger, OmniOptionError, optionKeys, shown } from '../../views/common/option-checks';
import { OMNI_METER_NAME, PACKAGE_VERSION } from '../../views/views';
import type { PipelineObserver } from '../pipeline/pipeline-observer';
import { subscribeChannels } from './channels';
import { methodDefinition, type HostClass } from './class-patcher';
import { feedOf, type HandleFeed } from './handle-feed';
import { listenTo, stopListening } from './host-patches';
import {
  abortWrapper,
  generateWrapper,
  ORCHESTRATOR_METHODS,
  orchestratorWrapper,
  REALTIME_METHODS,
  SERVING_METHODS,
  type OrchestratorMethod,
  type RealtimeMethod,
} from './host-wrappers';
import type { WrapperFactory } from './method-wrapper';
import { checkHostClasses, className, unpatchableMethod, warnWhenNothingToHook } from './host-class-checks';
import { realtimeWrapper } from './realtime-wrappers';

/** Options of `OmniInstrumentation`: the host classes (or modules) to wrap and the handle they record into. */
export interface OmniInstrumentationConfig extends InstrumentationConfig {
  /** The handle from `registerOmniMetrics`: the recorders the hooks feed. */
  readonly metrics: InstrumentedMetrics;
  /** The host's orchestrator class (see `OrchestratorLike`), anything with a prototype; its prototype is patched. */
  readonly orchestratorClass?: { readonly prototype: object };
  /** The host's serving class (see `OmniServingLike`), anything with a prototype; its `generate` is patched. */
  readonly servingClass?: { readonly prototype: object };
  /**
   * Host modules to patch when loaded (`require` or `import`), for classes the host does not hand
   * in: the module's name as required (`my-serving`) or an absolute file path, the semver ranges
   * of its package versions to patch (default every version), and which exports are the classes.
   */
  readonly modules?: ReadonlyArray<{
    readonly moduleName: string;
    readonly versions?: readonly string[];
    readonly orchestratorExport?: string;
    readonly servingExport?: string;
  }>;
  /** Also listen on `OMNI_CHANNELS` (default true). */
  readonly diagnosticsChannels?: boolean;
  /**
   * A request with no activity (stream output, stage submission) for this long is ended: its
   * stream counted as an abort, its admission released. Default 600 000 (10 minutes).
   */
  readonly requestIdleTimeoutMillis?: number;
  /** Requests tracked at once; past it the oldest is ended as an abort. Default 100 000. */
  readonly maxTrackedRequests?: number;
}

/** A host module to hook when it is loaded (see `OmniInstrumentationConfig.modules`). */
export type HostModuleHook = NonNullable<OmniInstrumentationConfig['modules']>[number];

const INSTRUMENTATION_CONFIG_KEYS = optionKeys<OmniInstrumentationConfig>({
  enabled: true,
  metrics: true,
  orchestratorClass: true,
  servingClass: true,
  modules: true,
  diagnosticsChannels: true,
  requestIdleTimeoutMillis: true,
  maxTrackedRequests: true,
});

const foreignProvider = new WarnOnce(1);
/** Handles already told that their hooks feed recorders with logStats off. */
const toldLogStatsOff = new WeakSet<InstrumentedMetrics>();
const doubleFeed = new WarnOnce();
const unpatchable = new WarnOnce();

/**
 * Registers every metric of a pipeline by wrapping its orchestrator and serving classes: no
 * metric call in the host's code. Each host method is patched once per process, whoever asks;
 * the patch calls the original alone while nothing listens. `enable()` makes the handle's feed a
 * listener of the configured classes (and of `OMNI_CHANNELS`), `disable()` takes it off, and the
 * original method is back exactly once no instrumentation listens. One instrumentation feeds a
 * handle at a time (a second one enabled on the same handle throws); instrumentations of
 * separate handles each count what they see. A wrapped method returns what the original returns
 * (the same value; a promise of the same outcome, see `followResult`) and rethrows the host's
 * errors untouched; telemetry failures are reported once through `diag` and never reach the host.
 */
export class OmniInstrumentation extends InstrumentationBase<OmniInstrumentationConfig> {
  // Declared, not initialised: the base constructor calls init(), _updateMetricInstruments() and
  // enable() before subclass field initialisers would run (and would then reset them).
  declare private explicitProvider: MeterProvider | undefined;
  declare private unsubscribe: (() => void) | undefined;
  declare private patched: Array<{ owner: object; name: string }> | undefined;

  constructor(config: OmniInstrumentationConfig) {
    checkObject(config, 'OmniInstrumentation config', INSTRUMENTATION_CONFIG_KEYS);
    if (!config.metrics) throw new OmniOptionError('metrics', `OmniInstrumentation needs { metrics } from registerOmniMetrics(); got ${shown(config.metrics)}`);
    checkBoolean(config.diagnosticsChannels, 'diagnosticsChannels');
    checkArray(config.modules, 'modules');
    checkHostClasses(config);
    checkPositiveInteger(config.requestIdleTimeoutMillis, 'requestIdleTimeoutMillis');
    checkPositiveInteger(config.maxTrackedRequests, 'maxTrackedRequests');
    warnWhenNothingToHook(config);
    super(OMNI_METER_NAME, PACKAGE_VERSION, config);
  }

  /** The recorders the hooks feed: the handle's own (a provider set with `setMeterProvider` changes only its GenAI histograms). */
  get recorders(): OmniRecorders {
    return this._config.metrics;
  }

  /**
   * The handle's observer, which the hooks and channels feed (exposed for tests and diagnostics).
   * @internal
   */
  get observer(): PipelineObserver {
    return this.feed.observer;
  }

  private get feed(): HandleFeed {
    return feedOf(this._config.metrics);
  }

  /**
   * Takes the provider NodeSDK (or you) hands the instrumentation: the GenAI histograms, when the handle records them,
   * move to it; the catalog's families stay in the handle's store.
   */
  override setMeterProvider(meterProvider: MeterProvider): void {
    this.explicitProvider = meterProvider;
    super.setMeterProvider(meterProvider);
  }

  /** Moves the GenAI histograms (the only instruments outside the catalog's store) to the provider given to `setMeterProvider`. */
  protected override _updateMetricInstruments(): void {
    const provider = this.explicitProvider;
    const metrics = this._config.metrics;
    if (provider === undefined || !metrics.settings.genAiMetrics || metrics.statLogger === undefined) return;
    if (provider !== metrics.meterProvider) {
      foreignProvider.warn(
        'provider',
        "OmniInstrumentation was given a MeterProvider other than the registration's (NodeSDK gives one to every instrumentation in its list): the GenAI histograms now go to that provider, not to this package's /metrics. Inside NodeSDK, register with meterProvider: 'external' and put handle.prometheusReader in NodeSDK's metricReaders.",
      );
    }
    metrics.statLogger.useGenAi(new OmniGenAiMetrics(provider.getMeter(GEN_AI_METER_NAME, PACKAGE_VERSION), metrics.settings.modelName));
  }

  /** One module definition per `modules` entry: the SDK patches the entry's orchestrator and serving exports when the module loads. */
  protected override init(): InstrumentationModuleDefinition[] {
    return (this._config.modules ?? []).map((hook) => {
      const versions = [...(hook.versions ?? ['*'])];
      const classesOf = (exports: unknown): Array<[HostClass | undefined, 'orchestrator' | 'serving']> => {
        const moduleExports = (exports ?? {}) as Record<string, unknown>;
        return [
          [moduleExports[hook.orchestratorExport ?? ''] as HostClass | undefined, 'orchestrator'],
          [moduleExports[hook.servingExport ?? ''] as HostClass | undefined, 'serving'],
        ];
      };
      const patch = <T>(exports: T): T => {
        for (const [hostClass, kind] of classesOf(exports)) this.listenToClass(hostClass, kind);
        return exports;
      };
      // Only this module's classes: patches of other modules (and other instrumentations' listening) stay.
      const unpatch = (exports?: unknown): void => {
        for (const [hostClass] of classesOf(exports)) this.stopListeningToClass(hostClass);
      };
      if (!isAbsolute(hook.moduleName)) return new InstrumentationNodeModuleDefinition(hook.moduleName, versions, patch, unpatch);
      // A file path: the require hook reports it by its bare name, which the SDK matches as a module file.
      const file = new InstrumentationNodeModuleFile(parse(hook.moduleName).name, versions, patch, unpatch);
      return new InstrumentationNodeModuleDefinition(hook.moduleName, versions, undefined, undefined, [file]);
    });
  }

  /**
   * Starts feeding the handle from the configured classes and, unless `diagnosticsChannels` is false, `OMNI_CHANNELS`;
   * throws when another enabled instrumentation already feeds the handle from one of them.
   */
  override enable(): void {
    if (this.isEnabled()) return;
    const feed = this.feed;
    const channels = this._config.diagnosticsChannels !== false;
    // Refused before anything changes: another instrumentation of this handle on one of these sources.
    const sources = [...methodsOf(this._config.orchestratorClass, 'orchestrator'), ...methodsOf(this._config.servingClass, 'serving')];
    if (channels) sources.push([CHANNELS_SOURCE, 'channels']);
    const taken = sources.find(([source, name]) => this.takenByAnother(source, name));
    if (taken !== undefined) {
      const what = taken[0] === CHANNELS_SOURCE ? 'the diagnostics channels' : `${taken[1]}()`;
      throw new Error(
        `omni-otel-metrics: another enabled OmniInstrumentation already feeds this registerOmniMetrics handle from ${what}, so each call would be counted twice: disable it first, or give each instrumentation its own handle`,
      );
    }
    const lifetime = { requestIdleTimeoutMillis: this._config.requestIdleTimeoutMillis, maxTrackedRequests: this._config.maxTrackedRequests };
    // The handle's shutdown disables this instrumentation: nothing keeps feeding a handle that is gone.
    feed.open(this, lifetime, () => this.disable());
    warnWhenLogStatsOff(this._config.metrics);
    super.enable();
    this.listenToClass(this._config.orchestratorClass, 'orchestrator');
    this.listenToClass(this._config.servingClass, 'serving');
    if (channels) {
      feed.claim(this, CHANNELS_SOURCE, 'channels');
      this.unsubscribe = subscribeChannels(feed);
    }
  }

  /**
   * Stops feeding the handle: its listeners leave the host methods and the channels. Once nothing feeds the handle,
   * requests in flight are forgotten uncounted.
   */
  override disable(): void {
    if (!this.isEnabled()) return;
    super.disable();
    const feed = this.feed;
    for (const { owner, name } of this.patched ?? []) this.stopListeningTo(owner, name);
    this.patched = [];
    if (this.unsubscribe !== undefined) {
      this.unsubscribe();
      this.unsubscribe = undefined;
      feed.release(this, CHANNELS_SOURCE, 'channels');
    }
    feed.close(this);
  }

  private takenByAnother(source: object, name: string): boolean {
    const owner = this.feed.claimedBy(source, name);
    return owner !== undefined && owner !== this;
  }

  private listenToClass(hostClass: HostClass | undefined, kind: 'orchestrator' | 'serving'): void {
    const feed = this.feed;
    for (const [owner, name] of methodsOf(hostClass, kind)) {
      if (this.takenByAnother(owner, name)) {
        // A module loaded while another instrumentation of this handle already watches its class.
        doubleFeed.warn(name, `${name}() is already fed to this handle by another OmniInstrumentation; this one leaves it to that one`);
        continue;
      }
      feed.claim(this, owner, name);
      listenTo(owner, name, feed, wrapperFor(kind, name));
      this.patched ??= [];
      if (!this.patched.some((p) => p.owner === owner && p.name === name)) this.patched.push({ owner, name });
    }
  }

  private stopListeningToClass(hostClass: HostClass | undefined): void {
    for (const kind of ['orchestrator', 'serving'] as const) {
      for (const [owner, name] of methodsOf(hostClass, kind)) {
        if (!(this.patched ?? []).some((p) => p.owner === owner && p.name === name)) continue;
        this.stopListeningTo(owner, name);
        this.patched = (this.patched ?? []).filter((p) => p.owner !== owner || p.name !== name);
      }
    }
  }

  private stopListeningTo(owner: object, name: string): void {
    this.feed.release(this, owner, name);
    stopListening(owner, name, this.feed);
  }
}

/** The diagnostics channels, as one source a handle is fed from. */
const CHANNELS_SOURCE = {};

/**
 * The methods of a host class to patch, each with the prototype that defines it. A method the
 * hooks cannot patch is refused at construction for a class option; one of a class a module hook
 * found is left alone with a warning (the host's `require` must not fail).
 */
function methodsOf(hostClass: HostClass | undefined, kind: 'orchestrator' | 'serving'): Array<[object, string]> {
  if (typeof hostClass !== 'function' && (typeof hostClass !== 'object' || hostClass === null)) return [];
  const prototype = (hostClass as HostClass).prototype;
  if (typeof prototype !== 'object' || prototype === null) return [];
  const names: readonly string[] = kind === 'orchestrator' ? ORCHESTRATOR_METHODS : SERVING_METHODS;
  const found: Array<[object, string]> = [];
  for (const name of names) {
    const definition = methodDefinition(prototype, name);
    if (definition?.kind === 'method') found.push([definition.owner, name]);
    else if (definition !== undefined) {
      const option = kind === 'orchestrator' ? 'orchestratorClass' : 'servingClass';
      const reason = unpatchableMethod(prototype, name, option, className(hostClass)) ?? `${name} cannot be patched`;
      unpatchable.warn(`${className(hostClass)}.${name}`, `${reason}; its calls are not counted`);
    }
  }
  return found;
}

function wrapperFor(kind: 'orchestrator' | 'serving', name: string): WrapperFactory {
  if (kind === 'orchestrator') return orchestratorWrapper(name as OrchestratorMethod);
  if ((REALTIME_METHODS as readonly string[]).includes(name)) return realtimeWrapper(name as RealtimeMethod);
  return name === 'abort' ? abortWrapper : generateWrapper;
}

/**
 * Hooks on a handle registered with logStats off feed recorders that drop every observation
 * (vLLM-Omni's `--log-stats` gating): said once per handle when they attach, not a self-check
 * interval later.
 */
function warnWhenLogStatsOff(metrics: InstrumentedMetrics): void {
  if (metrics.settings.logStats || toldLogStatsOff.has(metrics)) return;
  toldLogStatsOff.add(metrics);
  packageDiag.warn(
    'omni-otel-metrics: OmniInstrumentation hooks attached to a handle registered with logStats off: the pipeline families drop every observation they make and no vllm:* engine family is registered (vLLM-Omni gates them on --log-stats); register with logStats: true',
  );
}
