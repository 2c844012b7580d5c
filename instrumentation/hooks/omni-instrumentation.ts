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
import { createRecorders, stopRecorders, type OmniRecorders } from '../recorders/recorders';
import { LimitedWarning, WarnOnce } from '../../views/diag-warnings';
import { checkArray, checkBoolean, checkObject, optionKeys } from '../../views/option-checks';
import { hostCallCountsOf, type HostCallCounts } from '../self-check/host-calls';
import type { HostMethod } from '../self-check/types';
import { OMNI_METER_NAME, PACKAGE_VERSION } from '../../views/views';
import { subscribeChannels } from './channels';
import { methodOwner, type HostClass } from './class-patcher';
import { checkHostClasses } from './host-class-checks';
import type { EngineCoreOutputs, OrchestratorRequest, ReceiveReceipt, StageRequest, TransferReceipt } from '../pipeline/host-contract';
import { DEFAULT_REQUEST_IDLE_TIMEOUT_MILLIS, PipelineObserver, type BindingSource } from '../pipeline/pipeline-observer';
import { observeStream } from './stream-observer';
import { observeResult, TelemetryGuard } from './telemetry-guard';

/** A host module to hook when it is loaded (`require` or `import`), and which exports are the classes. */
export interface HostModuleHook {
  /** Module name as required (`my-serving`), or an absolute file path. */
  readonly moduleName: string;
  /** Semver ranges of the module's package versions to patch; default every version. */
  readonly versions?: readonly string[];
  readonly orchestratorExport?: string;
  readonly servingExport?: string;
}

export interface OmniInstrumentationConfig extends InstrumentationConfig {
  /** The handle from `registerOmniMetrics`: the recorders the hooks feed. */
  readonly metrics: InstrumentedMetrics;
  /** The host's orchestrator class (see `OrchestratorLike`); its prototype is patched. */
  readonly orchestratorClass?: HostClass;
  /** The host's serving class (see `OmniServingLike`); its `generate` is patched. */
  readonly servingClass?: HostClass;
  /** Host modules to patch when loaded, for classes the host does not hand in. */
  readonly modules?: readonly HostModuleHook[];
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

const unobservableStreams = new LimitedWarning();
const foreignProvider = new WarnOnce(1);

/** Streams collected while still tracked: their request ended without its consumer saying so. */
const droppedStreams = new FinalizationRegistry<{ observer: PipelineObserver; token: object }>(({ observer, token }) => {
  observer.generateEnded(token, 'abandoned');
});

const ORCHESTRATOR_METHODS = [
  'addRequest',
  'cleanupRequest',
  'submitToStage',
  'pollEngine',
  'sendToNextStage',
  'receiveFromPreviousStage',
  'addReplica',
  'removeReplica',
] as const;
type OrchestratorMethod = (typeof ORCHESTRATOR_METHODS)[number];
/** The orchestrator methods the self-check counts (replica changes feed no family). */
const COUNTED_METHODS: ReadonlySet<string> = new Set<OrchestratorMethod>(
  ORCHESTRATOR_METHODS.filter((name) => name !== 'addReplica' && name !== 'removeReplica'),
);
const SERVING_METHODS = ['generate', 'abort'] as const;
type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Registers every metric of a pipeline by wrapping its orchestrator and serving classes: no
 * metric call in the host's code. `enable()` patches, `disable()` restores the original
 * methods exactly; enabling twice never stacks wrappers. A wrapped method returns what the
 * original returns (the same value; a promise of the same outcome, see `followResult`) and
 * rethrows the host's errors untouched; telemetry failures are reported once through `diag` and
 * never reach the host.
 */
export class OmniInstrumentation extends InstrumentationBase<OmniInstrumentationConfig> {
  // Declared, not initialised: the base constructor calls init(), _updateMetricInstruments() and
  // enable() before subclass field initialisers would run (and would then reset them).
  declare private currentRecorders: OmniRecorders | undefined;
  declare private explicitProvider: MeterProvider | undefined;
  declare private currentObserver: PipelineObserver | undefined;
  declare private currentGuard: TelemetryGuard | undefined;
  declare private unsubscribe: (() => void) | undefined;
  declare private sweeper: NodeJS.Timeout | undefined;
  declare private patched: Array<{ owner: object; name: string }> | undefined;
  /** The self-check's per-host-call counts of the handle (one increment per host call, none per record). */
  declare private hostCalls: HostCallCounts | undefined;

  constructor(config: OmniInstrumentationConfig) {
    if (!config?.metrics) throw new TypeError('OmniInstrumentation needs { metrics } from registerOmniMetrics()');
    checkObject(config, 'OmniInstrumentation config', INSTRUMENTATION_CONFIG_KEYS);
    checkBoolean(config.diagnosticsChannels, 'diagnosticsChannels');
    checkArray(config.modules, 'modules');
    checkHostClasses(config);
    for (const option of ['requestIdleTimeoutMillis', 'maxTrackedRequests'] as const) {
      const value = config[option];
      if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new RangeError(`${option} must be a positive integer, got ${String(value)}`);
    }
    super(OMNI_METER_NAME, PACKAGE_VERSION, config);
  }

  /** Recorders in use: the handle's own, or ones rebuilt on a provider set with `setMeterProvider`. */
  get recorders(): OmniRecorders {
    return this.currentRecorders ?? this._config.metrics;
  }

  /** The call-site logic the hooks and channels feed (exposed for tests and diagnostics). */
  get observer(): PipelineObserver {
    this.currentObserver ??= new PipelineObserver(() => this.recorders, this._config.metrics.stageReplicaMap, {
      requestIdleTimeoutMillis: this._config.requestIdleTimeoutMillis,
      maxTrackedRequests: this._config.maxTrackedRequests,
    });
    return this.currentObserver;
  }

  override setMeterProvider(meterProvider: MeterProvider): void {
    this.explicitProvider = meterProvider;
    super.setMeterProvider(meterProvider);
  }

  /** Rebuilds every instrument on the provider given to `setMeterProvider`. */
  protected override _updateMetricInstruments(): void {
    if (this.explicitProvider === undefined) return; // the handle's provider and recorders are used as they are
    if (this.explicitProvider !== this._config.metrics.meterProvider && this._config.metrics.settings.genAiMetrics) {
      foreignProvider.warn(
        'provider',
        "OmniInstrumentation was given a MeterProvider other than the registration's (NodeSDK gives one to every instrumentation in its list): the GenAI histograms now go to that provider, not to this package's /metrics. Inside NodeSDK, register with meterProvider: 'external' and put handle.prometheusReader in NodeSDK's metricReaders.",
      );
    }
    if (this.currentRecorders) stopRecorders(this.currentRecorders);
    this.currentRecorders = createRecorders(this._config.metrics.store, this._config.metrics.settings, this.explicitProvider);
  }

  protected override init(): InstrumentationModuleDefinition[] {
    return (this._config.modules ?? []).map((hook) => {
      const versions = [...(hook.versions ?? ['*'])];
      const patch = <T>(exports: T): T => {
        const moduleExports = exports as Record<string, unknown>;
        this.patchClass(moduleExports[hook.orchestratorExport ?? ''] as HostClass | undefined, 'orchestrator');
        this.patchClass(moduleExports[hook.servingExport ?? ''] as HostClass | undefined, 'serving');
        return exports;
      };
      const unpatch = (exports?: unknown): void => {
        if (exports) this.unpatchAll();
      };
      if (!isAbsolute(hook.moduleName)) return new InstrumentationNodeModuleDefinition(hook.moduleName, versions, patch, unpatch);
      // A file path: the require hook reports it by its bare name, which the SDK matches as a module file.
      const file = new InstrumentationNodeModuleFile(parse(hook.moduleName).name, versions, patch, unpatch);
      return new InstrumentationNodeModuleDefinition(hook.moduleName, versions, undefined, undefined, [file]);
    });
  }

  override enable(): void {
    if (this.isEnabled()) return;
    super.enable();
    this.hostCalls = hostCallCountsOf(this._config.metrics);
    this.hostCalls?.attach();
    this.patchClass(this._config.orchestratorClass, 'orchestrator');
    this.patchClass(this._config.servingClass, 'serving');
    if (this._config.diagnosticsChannels !== false) this.unsubscribe = subscribeChannels(() => this.observer, this.guard(), this.hostCalls);
    const idleMillis = this._config.requestIdleTimeoutMillis ?? DEFAULT_REQUEST_IDLE_TIMEOUT_MILLIS;
    this.sweeper = setInterval(
      () => this.guard().run('idle request sweep', () => this.currentObserver?.sweep()),
      Math.max(10, Math.min(idleMillis / 4, 30_000)),
    );
    this.sweeper.unref();
  }

  override disable(): void {
    if (!this.isEnabled()) return;
    super.disable();
    this.hostCalls = undefined;
    this.unpatchAll();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    // Requests in flight when disabled are forgotten (uncounted; gauges back to 0), so nothing is recorded until enabled again.
    this.currentObserver?.settle();
    this.currentObserver = undefined;
  }

  private guard(): TelemetryGuard {
    this.currentGuard ??= new TelemetryGuard();
    return this.currentGuard;
  }

  private patchClass(hostClass: HostClass | undefined, kind: 'orchestrator' | 'serving'): void {
    if (typeof hostClass !== 'function' && (typeof hostClass !== 'object' || hostClass === null)) return;
    const prototype = (hostClass as HostClass).prototype;
    if (typeof prototype !== 'object' || prototype === null) return;
    const names: readonly string[] = kind === 'orchestrator' ? ORCHESTRATOR_METHODS : SERVING_METHODS;
    for (const name of names) {
      const owner = methodOwner(prototype, name);
      if (owner === undefined) continue;
      const wrapper =
        kind === 'orchestrator' ? this.orchestratorWrapper(name as OrchestratorMethod) : name === 'abort' ? this.abortWrapper() : this.generateWrapper();
      this._wrap(owner as Record<string, Method>, name, wrapper);
      this.patched ??= [];
      if (!this.patched.some((p) => p.owner === owner && p.name === name)) this.patched.push({ owner, name });
    }
  }

  private unpatchAll(): void {
    for (const { owner, name } of this.patched ?? []) this._unwrap(owner as Record<string, Method>, name);
    this.patched = [];
  }

  /** Observes one orchestrator call site after the original ran (cleanup: even if it threw). */
  private orchestratorWrapper(name: OrchestratorMethod): (original: Method) => Method {
    const instrumentation = this;
    const observe = (source: unknown, args: unknown[], result: unknown): void => {
      const observer = instrumentation.observer;
      const binding = source as BindingSource;
      switch (name) {
        case 'addRequest':
          return observer.requestAdded((args[0] as OrchestratorRequest).requestId);
        case 'cleanupRequest':
          return observer.requestCleanedUp(args[0] as string, binding);
        case 'submitToStage':
          return observer.stageSubmitted(args[0] as StageRequest);
        case 'pollEngine':
          return observer.enginePolled(args[0] as number, args[1] as number, result as EngineCoreOutputs | undefined, binding);
        case 'sendToNextStage':
          return observer.transferSent(result as TransferReceipt | undefined, binding);
        case 'receiveFromPreviousStage':
          return observer.transferReceived(result as ReceiveReceipt | undefined, binding);
        case 'addReplica':
          return followReplicaAdded(instrumentation._config.metrics, args[0] as number, result);
        case 'removeReplica':
          return void instrumentation._config.metrics.removeReplica(args[0] as number, args[1] as number);
      }
    };
    // Decided once per wrapped method, not per call: pollEngine runs for every replica on every tick.
    const counted = COUNTED_METHODS.has(name) ? (name as HostMethod) : undefined;
    const isPoll = name === 'pollEngine';
    return (original) =>
      function (this: unknown, ...args: unknown[]) {
        if (!instrumentation.isEnabled()) return original.apply(this, args);
        const calls = counted === undefined ? undefined : instrumentation.hostCalls;
        if (calls !== undefined) {
          calls.called(counted as HostMethod);
          if (isPoll) calls.polled(args[0], args[1]);
        }
        const guard = instrumentation.guard();
        if (name === 'cleanupRequest') {
          try {
            return original.apply(this, args);
          } finally {
            guard.run(name, () => observe(this, args, undefined));
          }
        }
        return observeResult(original.apply(this, args), guard, name, (value) => observe(this, args, value));
      };
  }

  /**
   * Counts the named requests as aborted before the host's `abort` runs, so that the streams it
   * ends are already settled as `client_abort` rather than read as disconnects.
   */
  private abortWrapper(): (original: Method) => Method {
    const instrumentation = this;
    return (original) =>
      function (this: unknown, ...args: unknown[]) {
        if (instrumentation.isEnabled()) {
          instrumentation.hostCalls?.called('abort');
          instrumentation.guard().run('abort', () => {
            const ids: unknown = args[0];
            const observer = instrumentation.observer;
            if (typeof ids === 'string') observer.requestAborted(ids);
            else if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') observer.requestAborted(id);
          });
        }
        return original.apply(this, args);
      };
  }

  /** Observes the stream `generate` returns; the stream object itself is returned unchanged. */
  private generateWrapper(): (original: Method) => Method {
    const instrumentation = this;
    return (original) =>
      function (this: unknown, ...args: unknown[]) {
        const stream = original.apply(this, args);
        if (!instrumentation.isEnabled()) return stream;
        instrumentation.hostCalls?.called('generate');
        const guard = instrumentation.guard();
        guard.run('generate start', () => {
          // The request object is the host's: a getter that throws is the hooks' problem, not the host's.
          const requestId = (args[0] as { requestId?: unknown } | undefined)?.requestId;
          if (typeof requestId !== 'string') return;
          const observer = instrumentation.observer;
          // Until tracking starts, a token nothing matches.
          let token: object = {};
          const observed = observeStream(stream, guard, {
            output: (value) => observer.generateOutput(token, value),
            ended: (outcome) => observer.generateEnded(token, outcome),
            active: () => instrumentation.isEnabled() && instrumentation.currentObserver === observer,
          });
          if (!observed) {
            unobservableStreams.warn('a generate stream could not be observed (not iterable, frozen, or refusing new properties); its request is not counted');
            return;
          }
          token = observer.generateStarted(requestId);
          // A stream dropped without being closed ends when it is collected, not at the idle timeout.
          droppedStreams.register(stream as object, { observer, token });
        });
        return stream;
      };
  }
}

/** The host added a replica: mapped unless the host (or a direct call) already did. */
function followReplicaAdded(metrics: InstrumentedMetrics, stage: number, replica: unknown): void {
  // Stages past `stagePools` are no vLLM engines: a new replica there has no series until it records.
  if (typeof replica !== 'number' || stage >= metrics.stageReplicaMap.replicasPerStage.length) return;
  if (metrics.stageReplicaMap.engineIndex(stage, replica) !== undefined) return;
  metrics.addReplica(stage, replica);
}
