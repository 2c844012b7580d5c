import { packageDiag } from '../../views/common/package-diag';
import { UnreadableInput } from './never-throw';
import type { OmniTransferMetrics } from './transfer-metrics';

export interface TransferTxInput {
  readonly fromStage: number;
  readonly toStage: number;
  readonly requestId: string;
  readonly sizeBytes: number;
  readonly txTimeMs: number;
  /** Accepted as hosts report it; no family records it. */
  readonly usedShm?: boolean;
}

/** What a stage reports when it finishes a request it received from the previous stage. */
export interface TransferRxInput {
  readonly stageId: number | null | undefined;
  /** The sending stage; default `stageId - 1`, the linear pipeline. */
  readonly fromStage?: number | null;
  readonly requestId: string;
  readonly replicaId?: number | null;
  /** Accepted as hosts report it; the size family is recorded on the sending side only. */
  readonly rxTransferBytes?: number;
  readonly rxDecodeTimeMs?: number;
  readonly rxInFlightTimeMs?: number;
}

/** The orchestrator's sticky binding: which replica of `stageId` serves `requestId`, if known. */
export type ReplicaResolver = (stageId: number, requestId: string) => number | null | undefined;

/** Where per-hop observations go: `OmniTransferMetrics`, or anything with its four methods. */
export type TransferEmitter = Pick<OmniTransferMetrics, 'observeSize' | 'observeTxTime' | 'observeRxTime' | 'observeInFlightTime'>;

export interface OrchestratorAggregatorOptions {
  readonly transferEmitter?: TransferEmitter;
  readonly replicaResolver?: ReplicaResolver;
}

/**
 * The per-hop emit of cross-stage transfers (vLLM-Omni's `OrchestratorAggregator`, its transfer
 * half): milliseconds in, seconds out. The emit resolves `from_replica` / `to_replica` through the
 * replica cache, then the resolver; if a side stays unknown the emit is skipped silently. Upstream
 * also sums each request's transfers per edge; nothing here reads such sums, so none are kept.
 * One aggregator may serve many requests and orchestrators: `onFinalizeRequest` drops what it
 * cached for a request, and a call may bring the resolver of its own orchestrator.
 */
export class OrchestratorAggregator {
  private readonly replicaCache = new Map<string, Map<number, number>>();
  private readonly unreadable = new UnreadableInput('OrchestratorAggregator');

  constructor(private readonly options: OrchestratorAggregatorOptions = {}) {}

  /** One sent transfer; `resolver` (default: the one given at construction) finds replicas the cache lacks. */
  recordTransferTx(input: TransferTxInput, resolver: ReplicaResolver | undefined = this.options.replicaResolver): void {
    let fromStage: number, toStage: number, requestId: string, sizeBytes: unknown, txTimeMs: unknown;
    try {
      ({ fromStage, toStage, requestId, sizeBytes, txTimeMs } = input);
    } catch {
      return this.unreadable.dropped('recordTransferTx');
    }
    const size = typeof sizeBytes === 'number' ? Math.trunc(sizeBytes) : sizeBytes;
    const seconds = typeof txTimeMs === 'number' ? txTimeMs / 1000 : txTimeMs;
    this.emit(fromStage, toStage, requestId, resolver, (metrics, fs, fr, ts, tr) => {
      metrics.observeSize(fs, fr, ts, tr, size as number);
      metrics.observeTxTime(fs, fr, ts, tr, seconds as number);
    });
  }

  /**
   * One received transfer. Stage 0 has no inbound edge; unless the input names its sender, the
   * edge is (stage - 1 → stage). The receiving replica, when reported, is cached for the request.
   */
  recordTransferRx(input: TransferRxInput, resolver: ReplicaResolver | undefined = this.options.replicaResolver): void {
    let toStage: unknown, fromStage: unknown, requestId: string, replicaId: unknown, rxDecodeTimeMs: unknown, rxInFlightTimeMs: unknown;
    try {
      ({ stageId: toStage, fromStage, requestId, replicaId, rxDecodeTimeMs, rxInFlightTimeMs } = input);
    } catch {
      return this.unreadable.dropped('recordTransferRx');
    }
    if (typeof toStage !== 'number' || !(toStage > 0)) return;
    const from = (fromStage ?? toStage - 1) as number;
    if (replicaId !== null && replicaId !== undefined) this.cacheReplica(toStage, requestId, replicaId as number);
    const rxSeconds = inSeconds(rxDecodeTimeMs ?? 0);
    const inFlightSeconds = inSeconds(rxInFlightTimeMs ?? 0);
    this.emit(from, toStage, requestId, resolver, (metrics, fs, fr, ts, tr) => {
      metrics.observeRxTime(fs, fr, ts, tr, rxSeconds);
      metrics.observeInFlightTime(fs, fr, ts, tr, inFlightSeconds);
    });
  }

  /** Remember which replica served a stage, for when the binding is gone by emit time. */
  cacheReplica(stageId: number, requestId: string, replicaId: number): void {
    let byStage = this.replicaCache.get(requestId);
    if (byStage === undefined) {
      byStage = new Map();
      this.replicaCache.set(requestId, byStage);
    }
    byStage.set(stageId, replicaId);
  }

  /** The request is over: the replicas cached for it are dropped. */
  onFinalizeRequest(requestId: string): void {
    this.replicaCache.delete(requestId);
  }

  /** Hands one hop to the emitter. The resolver and the emitter are the caller's code: a failure of theirs drops the hop. */
  private emit(
    fromStage: number,
    toStage: number,
    requestId: string,
    resolver: ReplicaResolver | undefined,
    observe: (metrics: TransferEmitter, fs: number, fr: number, ts: number, tr: number) => void,
  ): void {
    const metrics = this.options.transferEmitter;
    if (metrics === undefined) return;
    try {
      const fromReplica = this.resolveReplica(fromStage, requestId, resolver);
      const toReplica = this.resolveReplica(toStage, requestId, resolver);
      if (fromReplica === undefined || toReplica === undefined) return;
      observe(metrics, fromStage, fromReplica, toStage, toReplica);
    } catch (error) {
      packageDiag.debug('omni-otel-metrics: a transfer emitter or replica resolver failed; the hop is dropped', error);
    }
  }

  private resolveReplica(stageId: number, requestId: string, resolver: ReplicaResolver | undefined): number | undefined {
    const cached = this.replicaCache.get(requestId)?.get(stageId);
    if (cached !== undefined) return cached;
    const resolved = resolver?.(stageId, requestId);
    return typeof resolved === 'number' ? Math.trunc(resolved) : undefined;
  }
}

/** Milliseconds as seconds; what is not a number goes on as it is, for the series to drop. */
function inSeconds(millis: unknown): number {
  return (typeof millis === 'number' ? millis / 1000 : millis) as number;
}
