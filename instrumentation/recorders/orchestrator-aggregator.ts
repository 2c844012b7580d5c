import { packageDiag } from '../../views/package-diag';
import type { OmniTransferMetrics } from './transfer-metrics';

/** Accumulated transfer of one request over one edge, in milliseconds (vLLM-Omni `TransferEdgeStats`). */
export interface TransferEdgeStats {
  readonly fromStage: number;
  readonly toStage: number;
  readonly requestId: string;
  sizeBytes: number;
  txTimeMs: number;
  rxDecodeTimeMs: number;
  inFlightTimeMs: number;
  usedShm: boolean;
}

export interface TransferTxInput {
  readonly fromStage: number;
  readonly toStage: number;
  readonly requestId: string;
  readonly sizeBytes: number;
  readonly txTimeMs: number;
  readonly usedShm?: boolean;
}

/** What a stage reports when it finishes a request it received from the previous stage. */
export interface TransferRxInput {
  readonly stageId: number | null | undefined;
  /** The sending stage; default `stageId - 1`, the linear pipeline. */
  readonly fromStage?: number | null;
  readonly requestId: string;
  readonly replicaId?: number | null;
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
 * Per-edge transfer accumulation (milliseconds) plus the per-hop emit hook (seconds), as
 * vLLM-Omni's `OrchestratorAggregator`. The emit resolves `from_replica` / `to_replica` through
 * the replica cache, then the resolver; if a side stays unknown the emit is skipped silently and
 * the accumulation is unaffected. Unlike upstream (one aggregator per request) this one may be
 * long-lived, so `onFinalizeRequest` drops everything kept for the request.
 */
export class OrchestratorAggregator {
  private readonly edges = new Map<string, Map<string, TransferEdgeStats>>();
  private readonly replicaCache = new Map<string, Map<number, number>>();

  constructor(private readonly options: OrchestratorAggregatorOptions = {}) {}

  recordTransferTx(input: TransferTxInput): TransferEdgeStats | undefined {
    try {
      const edge = this.edge(input.fromStage, input.toStage, input.requestId);
      edge.sizeBytes += input.sizeBytes;
      edge.txTimeMs += input.txTimeMs;
      edge.usedShm ||= input.usedShm === true;
      this.emit(input.fromStage, input.toStage, input.requestId, (metrics, fs, fr, ts, tr) => {
        metrics.observeSize(fs, fr, ts, tr, Math.trunc(input.sizeBytes));
        metrics.observeTxTime(fs, fr, ts, tr, input.txTimeMs / 1000);
      });
      return edge;
    } catch (error) {
      packageDiag.debug('omni-otel-metrics: recordTransferTx failed', error);
      return undefined;
    }
  }

  /** Stage 0 has no inbound edge; unless the input names its sender, the edge is (stage - 1 → stage). */
  recordTransferRx(input: TransferRxInput): TransferEdgeStats | undefined {
    try {
      const toStage = input.stageId;
      if (toStage === null || toStage === undefined || toStage <= 0) return undefined;
      const fromStage = input.fromStage ?? toStage - 1;
      if (input.replicaId !== null && input.replicaId !== undefined) {
        this.cacheReplica(toStage, input.requestId, input.replicaId);
      }
      const edge = this.edge(fromStage, toStage, input.requestId);
      if (edge.sizeBytes === 0) edge.sizeBytes = input.rxTransferBytes ?? 0;
      const rxDecodeTimeMs = input.rxDecodeTimeMs ?? 0;
      const rxInFlightTimeMs = input.rxInFlightTimeMs ?? 0;
      edge.rxDecodeTimeMs += rxDecodeTimeMs;
      edge.inFlightTimeMs += rxInFlightTimeMs;
      this.emit(fromStage, toStage, input.requestId, (metrics, fs, fr, ts, tr) => {
        metrics.observeRxTime(fs, fr, ts, tr, rxDecodeTimeMs / 1000);
        metrics.observeInFlightTime(fs, fr, ts, tr, rxInFlightTimeMs / 1000);
      });
      return edge;
    } catch (error) {
      packageDiag.debug('omni-otel-metrics: recordTransferRx failed', error);
      return undefined;
    }
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

  edgeStats(fromStage: number, toStage: number, requestId: string): TransferEdgeStats | undefined {
    return this.edges.get(requestId)?.get(`${fromStage}->${toStage}`);
  }

  onFinalizeRequest(requestId: string): void {
    this.replicaCache.delete(requestId);
    this.edges.delete(requestId);
  }

  private edge(fromStage: number, toStage: number, requestId: string): TransferEdgeStats {
    let byEdge = this.edges.get(requestId);
    if (byEdge === undefined) {
      byEdge = new Map();
      this.edges.set(requestId, byEdge);
    }
    const key = `${fromStage}->${toStage}`;
    let edge = byEdge.get(key);
    if (edge === undefined) {
      edge = { fromStage, toStage, requestId, sizeBytes: 0, txTimeMs: 0, rxDecodeTimeMs: 0, inFlightTimeMs: 0, usedShm: false };
      byEdge.set(key, edge);
    }
    return edge;
  }

  private emit(
    fromStage: number,
    toStage: number,
    requestId: string,
    observe: (metrics: TransferEmitter, fs: number, fr: number, ts: number, tr: number) => void,
  ): void {
    const metrics = this.options.transferEmitter;
    if (metrics === undefined) return;
    const fromReplica = this.resolveReplica(fromStage, requestId);
    const toReplica = this.resolveReplica(toStage, requestId);
    if (fromReplica === undefined || toReplica === undefined) return;
    observe(metrics, fromStage, fromReplica, toStage, toReplica);
  }

  private resolveReplica(stageId: number, requestId: string): number | undefined {
    const cached = this.replicaCache.get(requestId)?.get(stageId);
    if (cached !== undefined) return cached;
    const resolved = this.options.replicaResolver?.(stageId, requestId);
    return resolved === null || resolved === undefined ? undefined : Math.trunc(resolved);
  }
}
