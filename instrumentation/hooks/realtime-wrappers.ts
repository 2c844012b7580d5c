import type { RealtimeSessionRequest, ServerVadBatch } from '../pipeline/host-contract';
import type { HandleFeed } from './handle-feed';
import { NO_LISTENERS } from './host-patches';
import type { WrapperFactory } from './host-wrappers';
import { followResult } from './telemetry-guard';

/** The realtime methods of the serving class the hooks patch (optional, like `abort`). */
export const REALTIME_METHODS = ['openRealtimeSession', 'closeRealtimeSession', 'appendRealtimeAudio'] as const;
export type RealtimeMethod = (typeof REALTIME_METHODS)[number];

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
 * it threw), with the host's value and errors untouched.
 */
export function realtimeSessionWrapper(name: 'openRealtimeSession' | 'closeRealtimeSession'): WrapperFactory {
  const opening = name === 'openRealtimeSession';
  return (original, patch) =>
    function (this: unknown) {
      const feeds = patch.listeners;
      // eslint-disable-next-line prefer-rest-params
      const first: unknown = arguments[0];
      const observe = (): void =>
        each(feeds, name, (feed) => {
          if (opening) feed.observer.realtime.sessionOpened(first as RealtimeSessionRequest);
          else feed.observer.realtime.sessionClosed(first);
        });
      if (opening) {
        // eslint-disable-next-line prefer-rest-params
        const result = Reflect.apply(original, this, arguments) as unknown;
        observe();
        return result;
      }
      try {
        // eslint-disable-next-line prefer-rest-params
        return Reflect.apply(original, this, arguments) as unknown;
      } finally {
        observe();
      }
    };
}

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
