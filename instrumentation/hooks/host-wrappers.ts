import { LimitedWarning } from '../../views/diag-warnings';
import type { EngineCoreOutputs, OmniRequestOutput, OrchestratorRequest, ReceiveReceipt, StageRequest, TransferReceipt } from '../pipeline/host-contract';
import type { BindingSource, GenerateOutcome, PipelineObserver } from '../pipeline/pipeline-observer';
import type { HostMethod } from '../self-check/types';
import type { HandleFeed } from './handle-feed';
import { NO_LISTENERS, type HostMethodFn, type MethodPatch } from './host-patches';
import type { InstrumentedMetrics } from './instrumented-metrics';
import { observeStream, type StreamCallbacks } from './stream-observer';
import { followResult, ignoreReason } from './telemetry-guard';
import { isThenable } from '../../views/thenable';
import { activeTrace } from '../pipeline/request-trace';
import { enterRequestTrace, leaveRequestTrace } from '../../views/store/exemplar-slots';

export const ORCHESTRATOR_METHODS = [
  'addRequest',
  'cleanupRequest',
  'submitToStage',
  'pollEngine',
  'sendToNextStage',
  'receiveFromPreviousStage',
  'addReplica',
  'removeReplica',
] as const;
export type OrchestratorMethod = (typeof ORCHESTRATOR_METHODS)[number];
/** The realtime methods of the serving class the hooks patch (optional, like `abort`). */
export const REALTIME_METHODS = ['openRealtimeSession', 'closeRealtimeSession', 'appendRealtimeAudio'] as const;
export type RealtimeMethod = (typeof REALTIME_METHODS)[number];
export const SERVING_METHODS = ['generate', 'abort', ...REALTIME_METHODS] as const;

/** A wrapper factory: the original method and its patch, whose listeners the wrapper reads per call. */
export type WrapperFactory = (original: HostMethodFn, patch: MethodPatch<HandleFeed>) => HostMethodFn;

/** The orchestrator methods the self-check counts (replica changes feed no family). */
const COUNTED_METHODS: ReadonlySet<string> = new Set<OrchestratorMethod>(
  ORCHESTRATOR_METHODS.filter((name) => name !== 'addReplica' && name !== 'removeReplica'),
);

/** `NO_LISTENERS` held here: an imported binding is a property load per call, a module constant none. */
const IDLE = NO_LISTENERS;

const unobservableStreams = new LimitedWarning();

/**
 * What one orchestrator call tells a handle, whether a wrapper saw it or the host published it on
 * a diagnostics channel (`channels.ts`): one table for both paths.
 */
export interface OrchestratorEvent {
  /** Counts the call for the self-check (a poll also for its replica); replica changes are not counted. */
  count(feed: HandleFeed, first: unknown, second: unknown): void;
  /** Hands the call to the handle's observer: its first two arguments, its result, and the orchestrator it ran on (none from a channel). */
  readonly observe: Observe;
}

export function orchestratorEvent(name: OrchestratorMethod): OrchestratorEvent {
  // Decided once per method, not per call: pollEngine runs for every replica on every tick.
  const counted = COUNTED_METHODS.has(name) ? (name as HostMethod) : undefined;
  const isPoll = name === 'pollEngine';
  return {
    count(feed, first, second) {
      const calls = feed.hostCalls;
      if (counted === undefined || calls === undefined) return;
      if (isPoll) calls.polled(first, second);
      else calls.called(counted);
    },
    observe: observerOf(name),
  };
}

/**
 * Observes one orchestrator call site after the original ran (cleanup: even if it threw), once
 * per listening handle. Nobody listening: the original alone. The host's value (or a promise of
 * the same outcome, see `followResult`) and the host's errors come back untouched; a telemetry
 * failure is reported once per call site and never reaches the host.
 */
export function orchestratorWrapper(name: OrchestratorMethod): WrapperFactory {
  if (name === 'pollEngine') return pollWrapper;
  const event = orchestratorEvent(name);
  const observe = event.observe;
  const countCall = (feeds: readonly HandleFeed[], first: unknown, second: unknown): void => {
    for (const feed of feeds) event.count(feed, first, second);
  };
  const observeCall = (feeds: readonly HandleFeed[], source: unknown, first: unknown, second: unknown, result: unknown): unknown => {
    // A plain value is observed in place: no callback to allocate per call.
    if (!isThenable(result)) {
      observeEach(feeds, observe, name, source, first, second, result);
      return result;
    }
    return followResult(result, (value) => observeEach(feeds, observe, name, source, first, second, value), ignoreReason);
  };
  if (name === 'cleanupRequest') {
    return (original, patch) =>
      function (this: unknown, first?: unknown) {
        const feeds = patch.listeners;
        // eslint-disable-next-line prefer-rest-params
        if (feeds === IDLE) return Reflect.apply(original, this, arguments) as unknown;
        countCall(feeds, first, undefined);
        try {
          // eslint-disable-next-line prefer-rest-params
          return Reflect.apply(original, this, arguments) as unknown;
        } finally {
          observeEach(feeds, observe, name, this, first, undefined, undefined);
        }
      };
  }
  // The wrapper stays this small so that V8 inlines it where the host calls the method: with
  // nobody listening it costs one comparison with a constant (the work of listening lives in the
  // helpers above). `Reflect.apply`, unlike `original.apply`, needs no check of what `apply` is.
  // The named parameters are read, never passed on: `arguments` carries every argument the host gave.
  return (original, patch) =>
    function (this: unknown, first?: unknown, second?: unknown) {
      const feeds = patch.listeners;
      // eslint-disable-next-line prefer-rest-params
      if (feeds === IDLE) return Reflect.apply(original, this, arguments) as unknown;
      countCall(feeds, first, second);
      // eslint-disable-next-line prefer-rest-params
      return observeCall(feeds, this, first, second, Reflect.apply(original, this, arguments) as unknown);
    };
}

/**
 * `pollEngine`, the call of every replica on every tick, wrapped with nothing shared: counted and
 * observed by functions of its own, not through the event table's closures (eight at one call
 * site, too many for V8 to inline).
 */
const pollWrapper: WrapperFactory = (original, patch) =>
  function (this: unknown, first?: unknown, second?: unknown) {
    const feeds = patch.listeners;
    // eslint-disable-next-line prefer-rest-params
    if (feeds === IDLE) return Reflect.apply(original, this, arguments) as unknown;
    countPoll(feeds, first, second);
    // eslint-disable-next-line prefer-rest-params
    return observePolled(feeds, this, first, second, Reflect.apply(original, this, arguments) as unknown);
  };

/**
 * Counted before the host's method runs: a poll that throws was still made. The poll loops index
 * their lists: `for…of` compiles to the iterator protocol wrapped in a try/finally, several times
 * the bytecode, and V8 inlines a poll's calls against a budget of bytecode (counted: about 190
 * instructions more per poll with `for…of` here or in `observeEachPoll`).
 */
function countPoll(feeds: readonly HandleFeed[], stage: unknown, replica: unknown): void {
  for (let i = 0; i < feeds.length; i++) (feeds[i] as HandleFeed).hostCalls?.polled(stage, replica);
}

/** A plain value (every synchronous poll) is observed in place: no callback to allocate per call. */
function observePolled(feeds: readonly HandleFeed[], source: unknown, first: unknown, second: unknown, result: unknown): unknown {
  if (!isThenable(result)) {
    observeEachPoll(feeds, source, first, second, result);
    return result;
  }
  return followResult(result, (value) => observeEachPoll(feeds, source, first, second, value), ignoreReason);
}

/** Each listening handle observes the call; a telemetry failure is reported, never thrown. */
function observeEach(
  feeds: readonly HandleFeed[],
  observe: Observe,
  name: OrchestratorMethod,
  source: unknown,
  first: unknown,
  second: unknown,
  result: unknown,
): void {
  for (const feed of feeds) {
    try {
      observe(feed, source, first, second, result);
    } catch (error) {
      feed.guard.report(name, error);
    }
  }
}

export type Observe = (feed: HandleFeed, source: unknown, first: unknown, second: unknown, result: unknown) => void;

/** `observeEach` for polls, calling `observePoll` directly. */
function observeEachPoll(feeds: readonly HandleFeed[], source: unknown, first: unknown, second: unknown, result: unknown): void {
  for (let i = 0; i < feeds.length; i++) {
    const feed = feeds[i] as HandleFeed;
    try {
      observePoll(feed, source, first, second, result);
    } catch (error) {
      feed.guard.report('pollEngine', error);
    }
  }
}

/** A poll, told to one handle. */
function observePoll(feed: HandleFeed, source: unknown, first: unknown, second: unknown, result: unknown): void {
  const polled = result as EngineCoreOutputs | undefined;
  if (!feed.exemplars) return feed.observer.enginePolled(first as number, second as number, polled, source as BindingSource);
  // One poll serves many requests: the span active around it is read once, not by each of its records.
  const previous = enterRequestTrace(activeTrace());
  try {
    feed.observer.enginePolled(first as number, second as number, polled, source as BindingSource);
  } finally {
    leaveRequestTrace(previous);
  }
}

/** What one orchestrator method tells the observer, decided once per method. */
function observerOf(name: OrchestratorMethod): Observe {
  switch (name) {
    case 'addRequest':
      return (feed, _s, first) => feed.observer.requestAdded((first as OrchestratorRequest).requestId);
    case 'cleanupRequest':
      return (feed, _s, first) => feed.observer.requestCleanedUp(first as string);
    case 'submitToStage':
      return (feed, _s, first) => feed.observer.stageSubmitted(first as StageRequest);
    case 'pollEngine':
      return observePoll;
    case 'sendToNextStage':
      return (feed, source, _f, _s, result) => feed.observer.transferSent(result as TransferReceipt | undefined, source as BindingSource);
    case 'receiveFromPreviousStage':
      return (feed, source, _f, _s, result) => feed.observer.transferReceived(result as ReceiveReceipt | undefined, source as BindingSource);
    case 'addReplica':
      return (feed, _s, first, _second, result) => followReplicaAdded(feed.metrics, first as number, result);
    case 'removeReplica':
      return (feed, _s, first, second) => void feed.metrics.removeReplica(first as number, second as number);
  }
}

/**
 * Counts the named requests as aborted before the host's `abort` runs, so that the streams it
 * ends are already settled as `client_abort` rather than read as disconnects.
 */
export const abortWrapper: WrapperFactory = (original, patch) =>
  function (this: unknown) {
    const feeds = patch.listeners;
    // eslint-disable-next-line prefer-rest-params
    const ids: unknown = arguments[0];
    for (const feed of feeds) {
      feed.hostCalls?.called('abort');
      try {
        const observer = feed.observer;
        if (typeof ids === 'string') observer.requestAborted(ids);
        else if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') observer.requestAborted(id);
      } catch (error) {
        feed.guard.report('abort', error);
      }
    }
    // eslint-disable-next-line prefer-rest-params
    return Reflect.apply(original, this, arguments) as unknown;
  };

/** Observes the stream `generate` returns; the stream object itself is returned unchanged. */
export const generateWrapper: WrapperFactory = (original, patch) =>
  function (this: unknown) {
    // eslint-disable-next-line prefer-rest-params
    const stream = Reflect.apply(original, this, arguments) as unknown;
    const feeds = patch.listeners;
    if (feeds === IDLE) return stream;
    for (let i = 0; i < feeds.length; i++) (feeds[i] as HandleFeed).hostCalls?.called('generate');
    // eslint-disable-next-line prefer-rest-params
    const request: unknown = arguments[0];
    try {
      followStream(stream, request, feeds);
    } catch (error) {
      for (const feed of feeds) feed.guard.report('generate start', error);
    }
    return stream;
  };

/** Starts tracking a served stream in every listening handle's observer. */
function followStream(stream: unknown, request: unknown, feeds: readonly HandleFeed[]): void {
  // The request object is the host's: a getter that throws is the hooks' problem, not the host's.
  const requestId = (request as { requestId?: unknown } | undefined)?.requestId;
  if (typeof requestId !== 'string') return;
  const followed = new FollowedStream(feeds);
  const lifetime = observeStream(stream, (feeds[0] as HandleFeed).guard, followed);
  if (lifetime === undefined) {
    unobservableStreams.warn(
      isThenable(stream)
        ? 'a generate returned a promise (an async function?), not its stream: return the stream itself (an async generator); its request is not counted'
        : 'a generate stream could not be observed (not iterable, frozen, or refusing new properties); its request is not counted',
    );
    return;
  }
  followed.start(requestId, request, lifetime);
}

/** Until tracking starts, a token nothing matches. */
const UNTRACKED: object = Object.freeze({});

/**
 * One served stream as every listening handle follows it: each handle's observer as it was when
 * the stream started, and the token that observer named the stream by.
 */
class FollowedStream implements StreamCallbacks {
  private readonly observers: PipelineObserver[] = [];
  private readonly tokens: object[] = [];

  constructor(private readonly feeds: readonly HandleFeed[]) {
    for (let i = 0; i < feeds.length; i++) {
      this.observers.push((feeds[i] as HandleFeed).observer);
      this.tokens.push(UNTRACKED);
    }
  }

  /** Tracking starts; a stream dropped without being closed ends when `lifetime` is collected. */
  start(requestId: string, request: unknown, lifetime: object): void {
    for (let i = 0; i < this.observers.length; i++) {
      const observer = this.observers[i] as PipelineObserver;
      const token = observer.generateStarted(requestId, request);
      this.tokens[i] = token;
      observer.endWhenCollected(lifetime, token);
    }
  }

  output(value: OmniRequestOutput): void {
    for (let i = 0; i < this.feeds.length; i++) {
      const observer = this.following(i);
      if (observer === undefined) continue;
      try {
        observer.generateOutput(this.tokens[i] as object, value);
      } catch (error) {
        (this.feeds[i] as HandleFeed).guard.report('generate stream output', error);
      }
    }
  }

  ended(outcome: GenerateOutcome): void {
    for (let i = 0; i < this.feeds.length; i++) {
      const observer = this.following(i);
      if (observer === undefined) continue;
      try {
        observer.generateEnded(this.tokens[i] as object, outcome);
      } catch (error) {
        (this.feeds[i] as HandleFeed).guard.report('generate stream end', error);
      }
    }
  }

  active(): boolean {
    for (let i = 0; i < this.feeds.length; i++) if (this.following(i) !== undefined) return true;
    return false;
  }

  /** The observer of handle `i`, unless its instrumentation was disabled since (it has a new observer, or none). */
  private following(i: number): PipelineObserver | undefined {
    const observer = this.observers[i];
    return (this.feeds[i] as HandleFeed).observing === observer ? observer : undefined;
  }
}

/** The host added a replica: mapped unless the host (or a direct call) already did. */
function followReplicaAdded(metrics: InstrumentedMetrics, stage: number, replica: unknown): void {
  // Stages past `stagePools` are no vLLM engines: a new replica there has no series until it records.
  if (typeof replica !== 'number' || stage >= metrics.stageReplicaMap.replicasPerStage.length) return;
  if (metrics.stageReplicaMap.engineIndex(stage, replica) !== undefined) return;
  metrics.addReplica(stage, replica);
}
