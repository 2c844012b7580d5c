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
import type { TelemetryGuard } from './telemetry-guard';
import type { HostCallCounts } from '../self-check/host-calls';
import type { HostMethod } from '../self-check/types';

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
  addRequest: { readonly requestId: string };
  cleanupRequest: { readonly requestId: string };
  submitToStage: StageRequest;
  enginePolled: { readonly stageId: number; readonly replicaId: number; readonly outputs: EngineCoreOutputs };
  transferSent: TransferReceipt;
  transferReceived: ReceiveReceipt;
  /** With `requestLabels`, the message is the request its label values are read from (its fields, its `headers`). */
  generateStart: { readonly requestId: string; readonly [key: string]: unknown };
  generateOutput: { readonly requestId: string; readonly output: OmniRequestOutput };
  generateEnd: { readonly requestId: string; readonly outcome: GenerateOutcome };
  abort: { readonly requestId: string };
  realtimeSessionOpened: RealtimeSessionRequest;
  realtimeSessionClosed: { readonly sessionId: string };
  realtimeAudioAppended: { readonly sessionId: string; readonly batch: ServerVadBatch };
  realtimeVadError: { readonly sessionId: string; readonly reason: string };
}

type Handlers = { [K in keyof OmniChannelMessages]: (message: OmniChannelMessages[K]) => void };

/** The host method each channel stands for, as the self-check counts calls (output and end messages belong to one `generate`). */
const CHANNEL_METHODS: Partial<Record<keyof OmniChannelMessages, HostMethod>> = {
  addRequest: 'addRequest',
  cleanupRequest: 'cleanupRequest',
  submitToStage: 'submitToStage',
  enginePolled: 'pollEngine',
  transferSent: 'sendToNextStage',
  transferReceived: 'receiveFromPreviousStage',
  generateStart: 'generate',
  abort: 'abort',
};

/** Subscribes the observer to every channel; returns the unsubscribe function. */
export function subscribeChannels(observer: () => PipelineObserver, guard: TelemetryGuard, hostCalls?: HostCallCounts): () => void {
  const handlers: Handlers = {
    addRequest: (m) => observer().requestAdded(m.requestId),
    cleanupRequest: (m) => observer().requestCleanedUp(m.requestId),
    submitToStage: (m) => observer().stageSubmitted(m),
    enginePolled: (m) => observer().enginePolled(m.stageId, m.replicaId, m.outputs),
    transferSent: (m) => observer().transferSent(m),
    transferReceived: (m) => observer().transferReceived(m),
    generateStart: (m) => observer().generateStarted(m.requestId, m),
    generateOutput: (m) => {
      const stream = observer().streamOf(m.requestId);
      if (stream !== undefined) observer().generateOutput(stream, m.output);
    },
    generateEnd: (m) => {
      const stream = observer().streamOf(m.requestId);
      if (stream !== undefined) observer().generateEnded(stream, m.outcome);
    },
    abort: (m) => observer().requestAborted(m.requestId),
    realtimeSessionOpened: (m) => observer().realtime.sessionOpened(m),
    realtimeSessionClosed: (m) => observer().realtime.sessionClosed(m.sessionId),
    realtimeAudioAppended: (m) => observer().realtime.audioAppended(m.batch),
    realtimeVadError: (m) => observer().realtime.appendFailed(m),
  };
  const subscriptions = (Object.keys(OMNI_CHANNELS) as Array<keyof OmniChannelMessages>).map((key) => {
    const name = OMNI_CHANNELS[key];
    const method = CHANNEL_METHODS[key];
    const site = `channel ${name}`;
    const handler = handlers[key] as (m: unknown) => void;
    // The one never-throw boundary of a channel: whatever the message holds, the publisher goes on.
    const listener = (message: unknown): void => {
      try {
        if (method !== undefined && hostCalls !== undefined) {
          hostCalls.called(method);
          if (method === 'pollEngine') hostCalls.polled((message as { stageId?: unknown })?.stageId, (message as { replicaId?: unknown })?.replicaId);
        }
        handler(message);
      } catch (error) {
        guard.report(site, error);
      }
    };
    diagnosticsChannel.subscribe(name, listener);
    return () => diagnosticsChannel.unsubscribe(name, listener);
  });
  return () => subscriptions.forEach((unsubscribe) => unsubscribe());
}
