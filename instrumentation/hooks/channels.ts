import diagnosticsChannel from 'node:diagnostics_channel';
import type {
  EngineCoreOutputs,
  OmniRequestOutput,
  RealtimeSessionRequest,
  ReceiveReceipt,
  ServerVadBatch,
  StageRequest,
  TransferReceipt,
} from '../pipeline/host-contract';
import type { GenerateOutcome, PipelineObserver } from '../pipeline/pipeline-observer';
import type { HandleFeed } from './handle-feed';
import { orchestratorEvent } from './host-wrappers';
import type { MethodObservation } from './method-wrapper';

/**
 * `node:diagnostics_channel` names for hosts that prefer publishing events to being patched.
 * Each message has the same shape as the matching host-contract call, and reaches the same
 * recorders: `diagnostics_channel.channel(OMNI_CHANNELS.addRequest).publish({ requestId })`.
 */
export const OMNI_CHANNELS = {
  addRequest: 'omni-otel-metrics:orchestrator.add-request',
  cleanupRequest: 'omni-otel-metrics:orchestrator.cleanup-request',
  submitToStage: 'omni-otel-metrics:orchestrator.submit-to-stage',
  enginePolled: 'omni-otel-metrics:orchestrator.engine-polled',
  transferSent: 'omni-otel-metrics:orchestrator.transfer-sent',
  transferReceived: 'omni-otel-metrics:orchestrator.transfer-received',
  generateStart: 'omni-otel-metrics:serving.generate-start',
  generateOutput: 'omni-otel-metrics:serving.generate-output',
  generateEnd: 'omni-otel-metrics:serving.generate-end',
  abort: 'omni-otel-metrics:serving.abort',
  realtimeSessionOpened: 'omni-otel-metrics:serving.realtime-session-opened',
  realtimeSessionClosed: 'omni-otel-metrics:serving.realtime-session-closed',
  realtimeAudioAppended: 'omni-otel-metrics:serving.realtime-audio-appended',
  realtimeVadError: 'omni-otel-metrics:serving.realtime-vad-error',
} as const;

/** Message shapes, by channel. */
export interface OmniChannelMessages {
  /** The orchestrator admitted a request (its `addRequest`): it counts as running until its cleanup. */
  addRequest: { readonly requestId: string };
  /** A request was cleaned up after finish, abort or error (the orchestrator's `cleanupRequest`). */
  cleanupRequest: { readonly requestId: string };
  /** A request entered one replica of one stage (the orchestrator's `submitToStage`). */
  submitToStage: StageRequest;
  /** One poll of one replica's engine, with what it returned (the orchestrator's `pollEngine`). */
  enginePolled: { readonly stageId: number; readonly replicaId: number; readonly outputs: EngineCoreOutputs };
  /** The sender side of a cross-stage hop (the receipt `sendToNextStage` returns). */
  transferSent: TransferReceipt;
  /** The receiver side of a cross-stage hop (the receipt `receiveFromPreviousStage` returns). */
  transferReceived: ReceiveReceipt;
  /** With `requestLabels`, the message is the request its label values are read from (its fields, its `headers`). */
  generateStart: { readonly requestId: string; readonly [key: string]: unknown };
  /** One output of a served request's stream, as `generate` yields it; goes to the request's newest open stream. */
  generateOutput: { readonly requestId: string; readonly output: OmniRequestOutput };
  /** A served request's stream ended, and how; unless `unobserved`, a stream without its finished output counts as failed. */
  generateEnd: { readonly requestId: string; readonly outcome: GenerateOutcome };
  /** The host aborted a request (the serving class's `abort`): each of its open streams counts as failed, `client_abort`. */
  abort: { readonly requestId: string };
  /** A realtime session opened (`openRealtimeSession`); only a `server_vad` session counts as active. */
  realtimeSessionOpened: RealtimeSessionRequest;
  /** A realtime session closed (`closeRealtimeSession`). */
  realtimeSessionClosed: { readonly sessionId: string };
  /** An audio batch appended to a session, with what the VAD made of it (`appendRealtimeAudio`). */
  realtimeAudioAppended: { readonly sessionId: string; readonly batch: ServerVadBatch };
  /** An append failed: one VAD error, by `reason` (`input_overflow`, …; `error` when empty). */
  realtimeVadError: { readonly sessionId: string; readonly reason: string };
}

type Handlers = { [K in keyof OmniChannelMessages]: (message: OmniChannelMessages[K]) => void };

/**
 * Subscribes the handle's observer to every channel; returns the unsubscribe function. An
 * orchestrator message goes through the same event table as a wrapped call of the method it
 * stands for (`orchestratorEvent`).
 */
export function subscribeChannels(feed: HandleFeed): () => void {
  const observer = (): PipelineObserver => feed.observer;
  // An orchestrator message is its method's call, made on no orchestrator: counted, then observed.
  const heard = (event: MethodObservation, first: unknown, second: unknown, result: unknown): void => {
    event.before?.(feed, undefined, first, second, undefined);
    event.observe?.(feed, undefined, first, second, result);
  };
  const added = orchestratorEvent('addRequest');
  const cleanedUp = orchestratorEvent('cleanupRequest');
  const submitted = orchestratorEvent('submitToStage');
  const polled = orchestratorEvent('pollEngine');
  const sent = orchestratorEvent('sendToNextStage');
  const received = orchestratorEvent('receiveFromPreviousStage');
  const handlers: Handlers = {
    addRequest: (m) => heard(added, m, undefined, undefined),
    cleanupRequest: (m) => heard(cleanedUp, m.requestId, undefined, undefined),
    submitToStage: (m) => heard(submitted, m, undefined, undefined),
    enginePolled: (m) => heard(polled, m.stageId, m.replicaId, m.outputs),
    transferSent: (m) => heard(sent, undefined, undefined, m),
    transferReceived: (m) => heard(received, undefined, undefined, m),
    generateStart: (m) => {
      feed.hostCalls?.called('generate');
      observer().generateStarted(m.requestId, m);
    },
    generateOutput: (m) => {
      const stream = observer().streamOf(m.requestId);
      if (stream !== undefined) observer().generateOutput(stream, m.output);
    },
    generateEnd: (m) => {
      const stream = observer().streamOf(m.requestId);
      if (stream !== undefined) observer().generateEnded(stream, m.outcome);
    },
    abort: (m) => {
      feed.hostCalls?.called('abort');
      observer().requestAborted(m.requestId);
    },
    realtimeSessionOpened: (m) => observer().realtime.sessionOpened(m),
    realtimeSessionClosed: (m) => observer().realtime.sessionClosed(m.sessionId),
    realtimeAudioAppended: (m) => observer().realtime.audioAppended(m.sessionId, m.batch),
    realtimeVadError: (m) => observer().realtime.appendFailed(m),
  };
  const subscriptions = (Object.keys(OMNI_CHANNELS) as Array<keyof OmniChannelMessages>).map((key) => {
    const name = OMNI_CHANNELS[key];
    const site = `channel ${name}`;
    const handler = handlers[key] as (m: unknown) => void;
    // The one never-throw boundary of a channel: whatever the message holds, the publisher goes on.
    const listener = (message: unknown): void => {
      try {
        handler(message);
      } catch (error) {
        feed.guard.report(site, error);
      }
    };
    diagnosticsChannel.subscribe(name, listener);
    return () => diagnosticsChannel.unsubscribe(name, listener);
  });
  return () => subscriptions.forEach((unsubscribe) => unsubscribe());
}
