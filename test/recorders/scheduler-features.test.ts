import assert from 'node:assert/strict';
import { carriesFeature, FEATURE_FIELDS, type FeatureField } from '../../instrumentation/recorders/scheduler-features';
import { createSchedulerStats, type SchedulerStats } from '../../instrumentation/stats/types';

/**
 * One step carrying each feature and nothing else, by the field that carries it: the compiler
 * refuses this table when a feature field is added to `SchedulerStats` and left out here.
 */
const ONLY: { readonly [K in FeatureField]: Partial<SchedulerStats> } = {
  kvOffloadStats: { kvOffloadStats: {} as NonNullable<SchedulerStats['kvOffloadStats']> },
  simpleKvOffloadStats: { simpleKvOffloadStats: {} as NonNullable<SchedulerStats['simpleKvOffloadStats']> },
  connectorPrefixCacheStats: { connectorPrefixCacheStats: { requests: 1, queries: 10, hits: 2 } as NonNullable<SchedulerStats['connectorPrefixCacheStats']> },
  mmCacheStats: { mmCacheStats: { queries: 1, hits: 1 } as NonNullable<SchedulerStats['mmCacheStats']> },
  specDecodingStats: { specDecodingStats: {} as NonNullable<SchedulerStats['specDecodingStats']> },
  kvConnectorStats: { kvConnectorStats: {} as NonNullable<SchedulerStats['kvConnectorStats']> },
  kvCacheEvictionEvents: { kvCacheEvictionEvents: [{ lifetimeSeconds: 1, idleSeconds: 0.5, reuseGapsSeconds: [] }] },
  perfStats: { perfStats: { numFlopsPerGpu: 1, numReadBytesPerGpu: 0, numWriteBytesPerGpu: 0 } as NonNullable<SchedulerStats['perfStats']> },
  sleepState: { sleepState: { sleeping: true, level: 1 } },
};

describe('scheduler features: the test a step without features stops at', () => {
  it('is false for a step that carries none, true for a step that carries any one of every feature field', () => {
    assert.equal(carriesFeature(createSchedulerStats()), false);
    assert.deepEqual([...FEATURE_FIELDS].sort(), Object.keys(ONLY).sort());
    for (const field of FEATURE_FIELDS) assert.equal(carriesFeature(createSchedulerStats(ONLY[field])), true, field);
  });
});
