import type { BaseCacheStats } from './types';
import { shown } from '../../views/common/option-checks';

export const DEFAULT_MAX_RECENT_CACHE_REQUESTS = 1000;

export interface CachingMetricsOptions {
  /** How many of the most recent requests the hit rate covers. Default 1000, as in vLLM. */
  maxRecentRequests?: number;
}

/** One scheduler step's lookups, kept so they can leave the window later. */
interface StepLookups {
  readonly requests: number;
  readonly queries: number;
  readonly hits: number;
}

/**
 * vLLM's `CachingMetrics`: cache hit rate over the most recent requests, fed one scheduler step at a time. Used for
 * the local prefix cache, the KV connector's external cache and the multi-modal cache.
 */
export class CachingMetrics {
  readonly maxRecentRequests: number;
  private aggregatedRequestsCount = 0;
  private aggregatedQueryTotalCount = 0;
  private aggregatedQueryHitCount = 0;
  private readonly window: StepLookups[] = [];

  constructor({ maxRecentRequests = DEFAULT_MAX_RECENT_CACHE_REQUESTS }: CachingMetricsOptions = {}) {
    if (!Number.isFinite(maxRecentRequests) || maxRecentRequests < 0) {
      throw new RangeError(`maxRecentRequests must be a non-negative number; got ${shown(maxRecentRequests)}`);
    }
    this.maxRecentRequests = maxRecentRequests;
  }

  observe(stats: Readonly<BaseCacheStats>): void {
    // The cache was reset before this step: earlier hits describe a cache that no longer exists.
    if (stats.reset) this.reset();

    // Steps without lookups would push useful steps out of the window without adding information.
    if (stats.requests === 0) return;

    this.window.push({ requests: stats.requests, queries: stats.queries, hits: stats.hits });
    this.aggregatedRequestsCount += stats.requests;
    this.aggregatedQueryTotalCount += stats.queries;
    this.aggregatedQueryHitCount += stats.hits;

    // Whole steps leave the window, oldest first; the newest step stays even if it alone exceeds the limit.
    while (this.window.length > 1 && this.aggregatedRequestsCount > this.maxRecentRequests) {
      const oldest = this.window.shift() as StepLookups;
      this.aggregatedRequestsCount -= oldest.requests;
      this.aggregatedQueryTotalCount -= oldest.queries;
      this.aggregatedQueryHitCount -= oldest.hits;
    }
  }

  reset(): void {
    this.aggregatedRequestsCount = 0;
    this.aggregatedQueryTotalCount = 0;
    this.aggregatedQueryHitCount = 0;
    this.window.length = 0;
  }

  /** No request has been observed since construction or the last reset. */
  get empty(): boolean {
    return this.aggregatedRequestsCount === 0;
  }

  /** Hits / queries over the window, 0 when nothing was queried. */
  get hitRate(): number {
    if (this.aggregatedQueryTotalCount === 0) return 0;
    return this.aggregatedQueryHitCount / this.aggregatedQueryTotalCount;
  }

  get aggregatedRequests(): number {
    return this.aggregatedRequestsCount;
  }

  get aggregatedQueryTotal(): number {
    return this.aggregatedQueryTotalCount;
  }

  get aggregatedQueryHit(): number {
    return this.aggregatedQueryHitCount;
  }
}
