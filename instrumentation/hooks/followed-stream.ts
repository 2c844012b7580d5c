import type { OmniRequestOutput } from '../pipeline/host-contract';
import type { GenerateOutcome, PipelineObserver } from '../pipeline/pipeline-observer';
import { LimitedWarning } from '../../views/common/diag-warnings';
import { isThenable } from '../../views/common/thenable';
import type { HandleFeed } from './handle-feed';
import { observeStream, type StreamCallbacks } from './stream-observer';

const unobservableStreams = new LimitedWarning();

/** Starts tracking a served stream in every listening handle's observer. */
export function followStream(feeds: readonly HandleFeed[], request: unknown, stream: unknown): void {
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
