import type { ClusterSnapshot } from '../snapshot';

/**
 * Messages between the primary and its workers over the `cluster` IPC channel. Every message
 * carries `omniOtelMetrics: 1`, so the host's own messages on the same channel are left alone
 * (and ours are easy to skip in the host's listeners).
 */
export const PROTOCOL_KEY = 'omniOtelMetrics';
export const PROTOCOL_VERSION = 1;

/** Primary → worker: send your current snapshot, answering with `requestId`. */
export interface CollectMessage {
  readonly omniOtelMetrics: 1;
  readonly type: 'collect';
  readonly requestId: number;
}

/** Worker → primary: an answer to `requestId`, or a push (start, sync timer, `flush()` wanting `ackId`). */
export interface SnapshotMessage {
  readonly omniOtelMetrics: 1;
  readonly type: 'snapshot';
  readonly requestId?: number;
  readonly ackId?: number;
  /** Increases with every collection in the worker; an older snapshot arriving late is not stored. */
  readonly seq: number;
  readonly snapshot: ClusterSnapshot;
}

/** Primary → worker: the snapshot pushed with `ackId` is stored. */
export interface AckMessage {
  readonly omniOtelMetrics: 1;
  readonly type: 'ack';
  readonly ackId: number;
}

export type ProtocolMessage = CollectMessage | SnapshotMessage | AckMessage;

/**
 * True for a message of this protocol; anything else on the channel is ignored. A snapshot's
 * contents are only checked for a `metrics` list here: the primary checks them point by point
 * (`SnapshotChecker`) and keeps what is well formed.
 */
export function isProtocolMessage(value: unknown): value is ProtocolMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as Record<string, unknown>;
  if (message[PROTOCOL_KEY] !== PROTOCOL_VERSION) return false;
  switch (message.type) {
    case 'collect':
      return Number.isInteger(message.requestId);
    case 'ack':
      return Number.isInteger(message.ackId);
    case 'snapshot':
      return Number.isInteger(message.seq) && hasMetricsList(message.snapshot);
    default:
      return false;
  }
}

function hasMetricsList(snapshot: unknown): boolean {
  return typeof snapshot === 'object' && snapshot !== null && Array.isArray((snapshot as { metrics?: unknown }).metrics);
}
