import { LimitedWarning } from '../../views/common/diag-warnings';
import type { OmniRecorders } from '../recorders/recorders';
import type { RealtimeSessionRequest, ServerVadBatch } from './host-contract';

/** Sessions tracked at once by default; past it the oldest is counted as closed to make room. */
export const DEFAULT_MAX_TRACKED_SESSIONS = 100_000;

/**
 * The realtime call sites of the serving layer: sessions that run the server-side VAD (counted
 * once from open to close, whatever the host calls twice), each appended batch's inference time and
 * committed endpoints, and VAD failures. Session ids are kept only while a session is open.
 */
export class RealtimeVadObserver {
  private readonly open = new Set<string>();
  /** Sessions whose open is still pending (the host's method returned a promise): none is active yet. */
  private readonly opening = new Set<string>();
  private readonly evicted = new LimitedWarning();

  constructor(
    private readonly recorders: Pick<OmniRecorders, 'realtimeVad'>,
    private readonly maxTracked: number = DEFAULT_MAX_TRACKED_SESSIONS,
  ) {}

  /** A session opened; it counts only when its turn detection is `server_vad`. */
  sessionOpened(session: RealtimeSessionRequest | undefined): void {
    const sessionId = session?.sessionId;
    if (typeof sessionId !== 'string' || session?.turnDetection?.type !== 'server_vad' || this.open.has(sessionId)) return;
    if (this.open.size >= this.maxTracked) this.evictOldest();
    this.open.add(sessionId);
    this.recorders.realtimeVad.sessionStarted();
  }

  /**
   * The host's open returned a promise: the session becomes active when it fulfils
   * (`sessionOpenSettled`), and never if it rejects or the session is closed first.
   */
  sessionOpening(session: RealtimeSessionRequest | undefined): void {
    const sessionId = session?.sessionId;
    if (typeof sessionId !== 'string' || this.open.has(sessionId)) return;
    // Bounded as the open sessions are: past the cap the oldest pending open is forgotten (never counted).
    if (this.opening.size >= this.maxTracked) this.opening.delete(this.opening.values().next().value as string);
    this.opening.add(sessionId);
  }

  /** A pending open settled: counted as opened if it fulfilled and the session was not closed meanwhile. */
  sessionOpenSettled(session: RealtimeSessionRequest | undefined, fulfilled: boolean): void {
    const sessionId = session?.sessionId;
    if (typeof sessionId !== 'string' || !this.opening.delete(sessionId)) return;
    if (fulfilled) this.sessionOpened(session);
  }

  /** Idempotent: only the close of an open server-VAD session counts; a close while the open is pending cancels it. */
  sessionClosed(sessionId: unknown): void {
    if (typeof sessionId !== 'string') return;
    this.opening.delete(sessionId);
    if (this.open.delete(sessionId)) this.recorders.realtimeVad.sessionFinished();
  }

  /**
   * One batch appended to a session: its inference time, and the delay of every endpoint it
   * committed. Only a session opened with `server_vad` has a detector to time, so an append to any
   * other session is not observed; an endpoint delay counts only on a frame that stopped speech.
   */
  audioAppended(sessionId: unknown, batch: ServerVadBatch | undefined): void {
    if (batch === undefined || batch === null || typeof sessionId !== 'string' || !this.open.has(sessionId)) return;
    const vad = this.recorders.realtimeVad;
    vad.observeInference(batch.inferenceMs);
    for (const frame of batch.frames ?? []) {
      const decision = frame?.decision;
      if (decision?.speechStopped !== true) continue;
      const delay = decision.endpointDelayMs;
      if (typeof delay === 'number') vad.observeEndpointDelay(delay);
    }
  }

  /** An append failed: one error, with the reason the host's error carries. */
  appendFailed(error: unknown): void {
    const reason = typeof error === 'object' && error !== null ? (error as { reason?: unknown }).reason : undefined;
    this.recorders.realtimeVad.error(typeof reason === 'string' && reason !== '' ? reason : 'error');
  }

  /** Forgets every open session (the instrumentation is being disabled): the gauge returns to 0. */
  settle(): void {
    this.opening.clear();
    for (const sessionId of [...this.open]) this.sessionClosed(sessionId);
  }

  /** Sessions currently open (for tests and debugging). */
  get trackedSessions(): number {
    return this.open.size;
  }

  private evictOldest(): void {
    const oldest = this.open.values().next();
    if (oldest.done) return;
    this.sessionClosed(oldest.value);
    this.evicted.warn(`more than ${this.maxTracked} realtime sessions open: the oldest is counted as closed to make room`);
  }
}
