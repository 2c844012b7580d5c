import type { RealtimeSessionRequest, ServerVadBatch } from '../pipeline/host-contract';
import type { RealtimeMethod } from './host-wrappers';
import { wrapperOf, type MethodObservation, type WrapperFactory } from './method-wrapper';

/**
 * What each realtime method tells a handle, in the shape of every patched method. An open is
 * pending from the call until its value is known: it opens the session when it returns or its
 * promise fulfils, never if it throws or rejects, and a close meanwhile cancels it. The handle's
 * observer of the moment it settles is told (`observing`): one disabled since has forgotten the
 * pending session, and none is created for it.
 */
const REALTIME: Record<RealtimeMethod, MethodObservation> = {
  openRealtimeSession: {
    site: 'openRealtimeSession',
    before: (feed, _s, session) => feed.observer.realtime.sessionOpening(session as RealtimeSessionRequest | undefined),
    observe: (feed, _s, session) => feed.observing?.realtime.sessionOpenSettled(session as RealtimeSessionRequest | undefined, true),
    failed: (feed, _s, session) => feed.observing?.realtime.sessionOpenSettled(session as RealtimeSessionRequest | undefined, false),
    when: 'settled',
  },
  // A close holds even if the host's method threw.
  closeRealtimeSession: {
    site: 'closeRealtimeSession',
    observe: (feed, _s, sessionId) => feed.observer.realtime.sessionClosed(sessionId),
    when: 'returned',
  },
  /**
   * The batch the host returns (or resolves to) feeds inference time and endpoint delays; an append
   * that throws or rejects counts one VAD error and is rethrown as it was.
   */
  appendRealtimeAudio: {
    site: 'appendRealtimeAudio',
    observe: (feed, _s, sessionId, _second, batch) => feed.observer.realtime.audioAppended(sessionId, batch as ServerVadBatch | undefined),
    failed: (feed, _s, _f, _second, error) => feed.observer.realtime.appendFailed(error),
    when: 'settled',
  },
};

export function realtimeWrapper(name: RealtimeMethod): WrapperFactory {
  return wrapperOf(REALTIME[name]);
}
