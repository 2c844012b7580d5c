import type { RealtimeSessionRequest, ServerVadBatch } from '../pipeline/host-contract';
import type { HandleFeed } from './handle-feed';
import { NO_LISTENERS } from './host-patches';
import type { RealtimeMethod, WrapperFactory } from './host-wrappers';
import { followResult } from './telemetry-guard';
import { isThenable } from '../../views/thenable';
import type { RealtimeVadObserver } from '../pipeline/realtime-vad-observer';

/** Runs `work` for every listening handle; a telemetry failure is reported and never reaches the host. */
function each(feeds: readonly HandleFeed[], site: string, work: (feed: HandleFeed) => void): void {
  for (const feed of feeds) {
    try {
      work(feed);
    } catch (error) {
      feed.guard.report(site, error);
    }
  }
}

/**
 * A realtime session opens or closes: observed after the host's method returned (a close even if
 * it threw), with the host's value and errors untouched. An open that throws opens nothing; one
 * that returns a promise opens the session when the promise fulfils, never if it rejects.
 */
export function realtimeSessionWrapper(name: 'openRealtimeSession' | 'closeRealtimeSession'): WrapperFactory {
  if (name === 'openRealtimeSession') return openRealtimeSessionWrapper;
  return (original, patch) =>
    function (this: unknown) {
      const feeds = patch.listeners;
      // eslint-disable-next-line prefer-rest-params
      if (feeds === NO_LISTENERS) return Reflect.apply(original, this, arguments) as unknown;
      // eslint-disable-next-line prefer-rest-params
      const sessionId: unknown = arguments[0];
      try {
        // eslint-disable-next-line prefer-rest-params
        return Reflect.apply(original, this, arguments) as unknown;
      } finally {
        each(feeds, name, (feed) => feed.observer.realtime.sessionClosed(sessionId));
      }
    };
}

const openRealtimeSessionWrapper: WrapperFactory = (original, patch) =>
  function (this: unknown) {
    // eslint-disable-next-line prefer-rest-params
    const result = Reflect.apply(original, this, arguments) as unknown;
    const feeds = patch.listeners;
    if (feeds === NO_LISTENERS) return result;
    // eslint-disable-next-line prefer-rest-params
    const session = arguments[0] as RealtimeSessionRequest | undefined;
    if (!isThenable(result)) {
      each(feeds, 'openRealtimeSession', (feed) => feed.observer.realtime.sessionOpened(session));
      return result;
    }
    // The observers of now: one disabled before the open settles has forgotten the pending session.
    const pending: Array<readonly [HandleFeed, RealtimeVadObserver]> = [];
    each(feeds, 'openRealtimeSession', (feed) => {
      const realtime = feed.observer.realtime;
      realtime.sessionOpening(session);
      pending.push([feed, realtime]);
    });
    const settled = (fulfilled: boolean): void => {
      for (const [feed, realtime] of pending) feed.guard.run('openRealtimeSession', () => realtime.sessionOpenSettled(session, fulfilled));
    };
    return followResult(
      result,
      () => settled(true),
      () => settled(false),
    );
  };

/**
 * One batch of realtime audio: the batch the host returns (or resolves to) feeds inference time and
 * endpoint delays; an append that throws or rejects counts one VAD error and is rethrown as it was.
 */
export const appendRealtimeAudioWrapper: WrapperFactory = (original, patch) =>
  function (this: unknown) {
    const feeds = patch.listeners;
    // eslint-disable-next-line prefer-rest-params
    if (feeds === NO_LISTENERS) return Reflect.apply(original, this, arguments) as unknown;
    // eslint-disable-next-line prefer-rest-params
    const sessionId: unknown = arguments[0];
    const failed = (error: unknown): void => each(feeds, 'appendRealtimeAudio', (feed) => feed.observer.realtime.appendFailed(error));
    let result: unknown;
    try {
      // eslint-disable-next-line prefer-rest-params
      result = Reflect.apply(original, this, arguments) as unknown;
    } catch (error) {
      failed(error);
      throw error;
    }
    return followResult(
      result,
      (batch) => each(feeds, 'appendRealtimeAudio', (feed) => feed.observer.realtime.audioAppended(sessionId, batch as ServerVadBatch | undefined)),
      failed,
    );
  };

export function realtimeWrapper(name: RealtimeMethod): WrapperFactory {
  return name === 'appendRealtimeAudio' ? appendRealtimeAudioWrapper : realtimeSessionWrapper(name);
}
