export interface KvCacheManagerOptions {
  /** Blocks in the replica's KV cache (vLLM's `num_gpu_blocks`). */
  readonly numBlocks: number;
  /** Tokens per block (vLLM's `block_size`). */
  readonly blockSize: number;
}

/**
 * A replica's KV-cache block budget and its prefix cache. Blocks are counted, not stored; the prefix
 * cache remembers the chained hashes of full prompt blocks that were computed before (vLLM's
 * block-hash chain), evicting the least recently used once it holds as many hashes as there are blocks.
 */
export class KvCacheManager {
  readonly numBlocks: number;
  readonly blockSize: number;
  private usedBlocks = 0;
  /** Insertion order is recency: a hit moves the hash to the end. */
  private readonly cachedHashes = new Map<number, true>();

  constructor({ numBlocks, blockSize }: KvCacheManagerOptions) {
    if (!Number.isInteger(numBlocks) || numBlocks < 1) throw new RangeError(`numBlocks must be a positive integer; got ${numBlocks}`);
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError(`blockSize must be a positive integer; got ${blockSize}`);
    this.numBlocks = numBlocks;
    this.blockSize = blockSize;
  }

  get freeBlocks(): number {
    return this.numBlocks - this.usedBlocks;
  }

  /** Fraction of blocks in use, 0..1 (vLLM's `kv_cache_usage`). */
  get usage(): number {
    return this.usedBlocks / this.numBlocks;
  }

  blocksFor(numTokens: number): number {
    return Math.ceil(numTokens / this.blockSize);
  }

  /** Takes `count` blocks if that many are free; false (and nothing taken) otherwise. */
  tryAllocate(count: number): boolean {
    if (count > this.freeBlocks) return false;
    this.usedBlocks += count;
    return true;
  }

  free(count: number): void {
    this.usedBlocks = Math.max(0, this.usedBlocks - count);
  }

  /**
   * Prompt tokens already in the cache: the leading run of full blocks whose hashes are known. As in
   * vLLM at least one token is always recomputed, so a full hit stops one block short.
   */
  lookupPrefix(promptTokenIds: readonly number[]): number {
    const maxBlocks = Math.floor((promptTokenIds.length - 1) / this.blockSize);
    let parent = 0;
    let hits = 0;
    for (let block = 0; block < maxBlocks; block++) {
      parent = this.hashBlock(parent, promptTokenIds, block);
      if (!this.cachedHashes.has(parent)) break;
      this.cachedHashes.delete(parent);
      this.cachedHashes.set(parent, true);
      hits += 1;
    }
    return hits * this.blockSize;
  }

  /** Remembers every full block of a prompt whose prefill completed. */
  cachePrompt(promptTokenIds: readonly number[]): void {
    const fullBlocks = Math.floor(promptTokenIds.length / this.blockSize);
    let parent = 0;
    for (let block = 0; block < fullBlocks; block++) {
      parent = this.hashBlock(parent, promptTokenIds, block);
      this.cachedHashes.delete(parent);
      this.cachedHashes.set(parent, true);
    }
    while (this.cachedHashes.size > this.numBlocks) {
      const oldest = this.cachedHashes.keys().next().value as number;
      this.cachedHashes.delete(oldest);
    }
  }

  /** Drops every allocation and cached hash (engine stop). */
  reset(): void {
    this.usedBlocks = 0;
    this.cachedHashes.clear();
  }

  /** FNV-1a over the parent hash and the block's ids: equal prefixes give equal chains. */
  private hashBlock(parent: number, tokenIds: readonly number[], block: number): number {
    let hash = (0x811c9dc5 ^ parent) >>> 0;
    const end = (block + 1) * this.blockSize;
    for (let i = block * this.blockSize; i < end; i++) {
      hash = Math.imul(hash ^ (tokenIds[i] & 0xffff), 0x01000193) >>> 0;
      hash = Math.imul(hash ^ (tokenIds[i] >>> 16), 0x01000193) >>> 0;
    }
    return hash;
  }
}
