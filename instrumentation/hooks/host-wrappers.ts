import type { EngineCoreOutputs, OrchestratorRequest, ReceiveReceipt, StageRequest, TransferReceipt } from '../pipeline/host-contract';
import type { BindingSource } from '../pipeline/pipeline-observer';
import type { HostMethod } from '../self-check/types';
import type { InstrumentedMetrics } from './instrumented-metrics';
import { followStream } from './followed-stream';
import { wrapperOf, type MethodObservation, type Observe, type WrapperFactory } from './method-wrapper';

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

/** The orchestrator methods the self-check counts (replica changes feed no family). */
const COUNTED_METHODS: ReadonlySet<string> = new Set<OrchestratorMethod>(
  ORCHESTRATOR_METHODS.filter((name) => name !== 'addReplica' && name !== 'removeReplica'),
);

/**
 * What one orchestrator call tells a handle, whether a wrapper saw it or the host published it on
 * a diagnostics channel (`channels.ts`): one table for both paths. `before` counts the call for
 * the self-check (a poll also for its replica), before the host's method runs: a call that throws
 * was still made. `observe` hands it to the handle's observer: its first two arguments, its result,
 * and the orchestrator it ran on (none from a channel).
 */
export function orchestratorEvent(name: OrchestratorMethod): MethodObservation {
  return {
    site: name,
    before: counterOf(name),
    observe: observerOf(name),
    // A request's cleanup holds even if the host's method threw.
    when: name === 'cleanupRequest' ? 'returned' : 'settled',
  };
}

export function orchestratorWrapper(name: OrchestratorMethod): WrapperFactory {
  return wrapperOf(orchestratorEvent(name));
}

/** Decided once per method, not per call: pollEngine runs for every replica on every tick. */
function counterOf(name: OrchestratorMethod): Observe | undefined {
  if (!COUNTED_METHODS.has(name)) return undefined;
  if (name === 'pollEngine') return (feed, _s, stage, replica) => feed.hostCalls?.polled(stage, replica);
  const method = name as HostMethod;
  return (feed) => feed.hostCalls?.called(method);
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
      return (feed, source, first, second, result) =>
        feed.observer.enginePolled(first as number, second as number, result as EngineCoreOutputs | undefined, source as BindingSource);
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
 * `abort` counts the named requests as aborted before the host's method runs, so that the streams
 * it ends are already settled as `client_abort` rather than read as disconnects.
 */
export const abortWrapper: WrapperFactory = wrapperOf({
  site: 'abort',
  before(feed, _s, ids) {
    feed.hostCalls?.called('abort');
    const observer = feed.observer;
    if (typeof ids === 'string') observer.requestAborted(ids);
    else if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') observer.requestAborted(id);
  },
  when: 'settled',
});

/**
 * `generate`: counted once it returned, and the stream it returned followed by every listening
 * handle (the stream object itself is returned unchanged; a promise is not a stream, see
 * `followStream`).
 */
export const generateWrapper: WrapperFactory = wrapperOf({
  site: 'generate start',
  observe: (feed) => feed.hostCalls?.called('generate'),
  when: 'as-returned',
  together: followStream,
});

/** The host added a replica: mapped unless the host (or a direct call) already did. */
function followReplicaAdded(metrics: InstrumentedMetrics, stage: number, replica: unknown): void {
  // Stages past `stagePools` are no vLLM engines: a new replica there has no series until it records.
  if (typeof replica !== 'number' || stage >= metrics.stageReplicaMap.replicasPerStage.length) return;
  if (metrics.stageReplicaMap.engineIndex(stage, replica) !== undefined) return;
  metrics.addReplica(stage, replica);
}
