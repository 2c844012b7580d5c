import type { StageReplicaMap } from '../../views/stage-replica-map';
import type { HostMethod } from './types';

/** Replica ids per stage whose polls are counted; polls of higher ids still count per method. */
const MAX_COUNTED_REPLICA_ID = 4096;

/**
 * How often the hooks saw each host method called, and each replica polled: one increment per
 * host call (never per record), read by the self-check. Whether hooks ever fed the handle
 * decides between "the host never called X" and "nothing reached the recorders". A poll costs two
 * array increments: it runs for every replica on every orchestrator tick.
 */
export class HostCallCounts {
  private readonly calls: Record<HostMethod, number> = {
    addRequest: 0,
    cleanupRequest: 0,
    submitToStage: 0,
    pollEngine: 0,
    sendToNextStage: 0,
    receiveFromPreviousStage: 0,
    generate: 0,
    abort: 0,
  };
  /** Polls per stage, per replica id; a replica's slot starts over when the replica joins or leaves. */
  private readonly polls: number[][] = [];
  /** Sources feeding the handle now: patched host methods and the diagnostics channels. */
  private sources = 0;
  private everAttached = false;

  constructor(private readonly stageReplicaMap: StageReplicaMap) {
    stageReplicaMap.onChange(({ stage, replica }) => {
      const ofStage = this.polls[stage];
      if (ofStage !== undefined && replica < ofStage.length) ofStage[replica] = 0;
    });
  }

  /** One more source feeds this handle: a host method an instrumentation listens to, or its channels. */
  attach(): void {
    this.sources++;
    this.everAttached = true;
  }

  /** A source stopped feeding it: `disable()`, the handle's `shutdown()`, or a module hook's unpatch. */
  detach(): void {
    if (this.sources > 0) this.sources--;
  }

  /** Whether hooks feed the handle now. */
  get attached(): boolean {
    return this.sources > 0;
  }

  /**
   * Whether hooks ever fed it. The counts they left still say which methods were called once they
   * are gone (the shutdown summary comes after disable).
   */
  get wereAttached(): boolean {
    return this.everAttached;
  }

  called(method: HostMethod): void {
    // Each case a store to a named field: `this.calls[method]++` with six names at one site made
    // that a megamorphic lookup, a load and a store through V8's stub cache on every host call.
    switch (method) {
      case 'addRequest':
        this.calls.addRequest++;
        break;
      case 'cleanupRequest':
        this.calls.cleanupRequest++;
        break;
      case 'submitToStage':
        this.calls.submitToStage++;
        break;
      case 'pollEngine':
        this.calls.pollEngine++;
        break;
      case 'sendToNextStage':
        this.calls.sendToNextStage++;
        break;
      case 'receiveFromPreviousStage':
        this.calls.receiveFromPreviousStage++;
        break;
      case 'generate':
        this.calls.generate++;
        break;
      case 'abort':
        this.calls.abort++;
        break;
    }
  }

  /**
   * A `pollEngine(stage, replica)` call, counted as `called('pollEngine')` counts it (a store
   * to a named field: this runs for every replica on every tick) and per replica. Ids that cannot
   * index a replica count for the method only.
   */
  polled(stage: unknown, replica: unknown): void {
    this.calls.pollEngine++;
    const ofStage = typeof stage === 'number' ? this.polls[stage] : undefined;
    // Only an existing slot is counted here: a fractional or negative id finds none and is refused by `grow`.
    const count = ofStage !== undefined && typeof replica === 'number' ? ofStage[replica] : undefined;
    if (count !== undefined) (ofStage as number[])[replica as number] = count + 1;
    else this.grow(stage, replica);
  }

  count(method: HostMethod): number {
    return this.calls[method];
  }

  pollsOf(engineIndex: number): number {
    const at = this.stageReplicaMap.lookup(engineIndex);
    return at === undefined ? 0 : (this.polls[Number(at.stage)]?.[Number(at.replica)] ?? 0);
  }

  /** First poll of a replica id above the stage's slots: the slots grow to it (zero-filled, so they stay a packed array). */
  private grow(stage: unknown, replica: unknown): void {
    if (typeof stage !== 'number' || typeof replica !== 'number' || !Number.isInteger(stage) || !Number.isInteger(replica)) return;
    if (stage < 0 || replica < 0 || replica >= MAX_COUNTED_REPLICA_ID || this.stageReplicaMap.engineIndex(stage, replica) === undefined) return;
    while (this.polls.length <= stage) this.polls.push([]);
    const ofStage = this.polls[stage] as number[];
    while (ofStage.length <= replica) ofStage.push(0);
    ofStage[replica] = 1;
  }
}

/** The counts of each handle, for the hooks to find from the handle they are given (no public field). */
const countsByHandle = new WeakMap<object, HostCallCounts>();

export function setHostCallCounts(handle: object, counts: HostCallCounts): void {
  countsByHandle.set(handle, counts);
}

/** The counts of a handle from `registerOmniMetrics`; undefined for a hand-made handle (the hooks then count nothing). */
export function hostCallCountsOf(handle: object): HostCallCounts | undefined {
  return countsByHandle.get(handle);
}
