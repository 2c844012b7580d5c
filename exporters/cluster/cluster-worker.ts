import { packageDiag } from '../../views/common/package-diag';
import { isProtocolMessage, type ProtocolMessage, type SnapshotMessage } from './protocol';
import { familiesSnapshot } from '../exposition/snapshot-families';
import type { OmniPrometheusReader } from '../prometheus-reader';
import { checkNonNegativeNumber, checkObject, checkPositiveNumber, OmniOptionError } from '../../views/common/option-checks';

/** Options of `serveClusterWorker`. */
export interface ClusterWorkerOptions {
  /**
   * Also push a snapshot every this many milliseconds (an `unref()`ed timer), bounding what a
   * SIGKILL can lose to this much recording. Default 0: only on the primary's request and `flush()`.
   */
  readonly syncIntervalMillis?: number;
  /** How long `flush()` waits for the primary to confirm it stored the snapshot. Default 5000. */
  readonly flushTimeoutMillis?: number;
}

/** What `serveClusterWorker` needs of a `registerOmniMetrics` handle. */
export interface ClusterWorkerSource {
  /** The reader whose exposition the worker sends, native buckets and exemplars included. */
  readonly prometheusReader?: OmniPrometheusReader;
  /**
   * The registration's request labels: a `maxValues` bound is per process, so a worker refuses it.
   * @internal
   */
  readonly settings?: { readonly requestLabels?: ReadonlyArray<{ readonly name: string; readonly maxValues: number }> };
}

/** A worker's side of the aggregate, from `serveClusterWorker`. */
export interface ClusterWorker {
  /**
   * Pushes the current snapshot and resolves `true` once the primary confirmed it stored it
   * (`false` on timeout or a closed channel; never rejects). Call it before a graceful exit,
   * e.g. in your SIGTERM handler before `process.exit()` / `cluster.worker.disconnect()`: after
   * it, nothing this worker recorded can be lost.
   */
  flush(): Promise<boolean>;
  /** Stops answering and syncing, and removes the listeners (also done when the channel closes). */
  stop(): void;
}

const DEFAULT_FLUSH_TIMEOUT_MILLIS = 5000;

/**
 * Makes this `cluster` worker a source for `startClusterPrimary`: it answers the primary's
 * collect requests over the IPC channel with its cumulative snapshot (the exposition
 * `handle.prometheusReader` would serve, native buckets and exemplars included, as plain JSON),
 * announces itself with one at once, and pushes one every `syncIntervalMillis` if set. No files, no ports: register the worker with `prometheus: false`.
 *
 * Like any `'message'` listener, ours keeps the IPC channel referenced until `stop()` or disconnect.
 * A push on `'disconnect'` is impossible (the channel is already closed then), hence `flush()`.
 */
export function serveClusterWorker(handle: ClusterWorkerSource, options: ClusterWorkerOptions = {}): ClusterWorker {
  checkObject(options, 'serveClusterWorker options', ['syncIntervalMillis', 'flushTimeoutMillis']);
  checkNonNegativeNumber(options.syncIntervalMillis, 'syncIntervalMillis');
  checkPositiveNumber(options.flushTimeoutMillis, 'flushTimeoutMillis');
  const reader = (handle as Partial<ClusterWorkerSource> | null | undefined)?.prometheusReader;
  if (reader === undefined) {
    throw new OmniOptionError(
      'handle',
      'serveClusterWorker needs the handle registerOmniMetrics() returned, with its prometheusReader (leave prometheusReader on)',
    );
  }
  refuseFirstSeenBounds(handle);
  if (typeof process.send !== 'function') {
    throw new Error('serveClusterWorker must run in a worker started by cluster.fork() (this process has no IPC channel)');
  }
  const syncIntervalMillis = options.syncIntervalMillis ?? 0;
  const flushTimeoutMillis = options.flushTimeoutMillis ?? DEFAULT_FLUSH_TIMEOUT_MILLIS;

  let stopped = false;
  let seq = 0;
  let nextAckId = 1;
  const acks = new Map<number, (stored: boolean) => void>();

  const send = (message: ProtocolMessage): Promise<boolean> =>
    new Promise((resolve) => {
      if (stopped || !process.connected || process.send === undefined) return resolve(false);
      try {
        process.send(message, (error: Error | null) => resolve(error === null || error === undefined));
      } catch {
        resolve(false);
      }
    });

  /** Collects and sends one snapshot; never rejects. */
  const push = async (fields: Pick<SnapshotMessage, 'requestId' | 'ackId'> = {}): Promise<boolean> => {
    const mySeq = ++seq;
    try {
      const snapshot = familiesSnapshot(await reader.expositionFamilies());
      return await send({ omniOtelMetrics: 1, type: 'snapshot', ...fields, seq: mySeq, snapshot });
    } catch (error) {
      packageDiag.warn('omni-otel-metrics: could not send a snapshot to the cluster primary', error);
      return false;
    }
  };

  const onMessage = (message: unknown): void => {
    if (!isProtocolMessage(message)) return;
    if (message.type === 'collect') void push({ requestId: message.requestId });
    else if (message.type === 'ack') acks.get(message.ackId)?.(true);
  };

  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== undefined) clearInterval(timer);
    process.off('message', onMessage);
    process.off('disconnect', stop);
    for (const settle of [...acks.values()]) settle(false);
  };

  process.on('message', onMessage);
  process.on('disconnect', stop);
  const timer = syncIntervalMillis > 0 ? setInterval(() => void push(), syncIntervalMillis) : undefined;
  timer?.unref();
  void push();

  return {
    flush: async () => {
      if (stopped) return false;
      const ackId = nextAckId++;
      const stored = new Promise<boolean>((resolve) => {
        const timeout = setTimeout(() => settle(false), flushTimeoutMillis);
        timeout.unref();
        const settle = (ok: boolean): void => {
          clearTimeout(timeout);
          acks.delete(ackId);
          resolve(ok);
        };
        acks.set(ackId, settle);
      });
      if (!(await push({ ackId }))) acks.get(ackId)?.(false);
      return stored;
    },
    stop,
  };
}

/**
 * `maxValues` admits the first values each process sees: every worker would admit its own, so the
 * aggregate would attribute one tenant's requests to `other` in one worker and to itself in the
 * next, and hold up to workers × `maxValues` values. An allow-list is the same in every worker
 * and every replacement, so the bound holds in the sum.
 */
function refuseFirstSeenBounds(handle: ClusterWorkerSource): void {
  handle.settings?.requestLabels?.forEach((label, i) => {
    if (label.maxValues === 0) return;
    throw new OmniOptionError(
      `requestLabels[${i}].maxValues`,
      `requestLabels[${i}].maxValues (${JSON.stringify(label.name)}) cannot bound a node:cluster worker: each worker would admit its own first values, and the primary's sum would misattribute them. List the values in requestLabels[${i}].values instead, the same in every worker`,
    );
  });
}
