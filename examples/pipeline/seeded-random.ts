/**
 * A tiny deterministic PRNG (mulberry32) so a simulated run is reproducible from one seed. Not for
 * cryptography: 32 bits of state are plenty to make a replica's choices repeatable in tests.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, bound). */
  nextInt(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  /** Uniform in [min, max). */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** FNV-1a over a string, 32 bits: stable ids for words, voices and (seed, stage, replica) triples. */
export function hashString(text: string, basis = 0x811c9dc5): number {
  let hash = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A per-replica seed: every replica draws its own sequence, yet the whole run follows one seed. */
export function replicaSeed(seed: number, stageId: number, replicaId: number): number {
  return hashString(`${seed}/${stageId}/${replicaId}`);
}
