import assert from 'node:assert/strict';
import * as root from '../index';

/**
 * The root entry is the product's API: what an application needs to register, hook its classes
 * and serve or push. A name added here is a promise to keep; building blocks go behind subpaths.
 */
describe('the root entry', () => {
  it('exports exactly the application API (values; types are checked by the compiler)', () => {
    assert.deepEqual(Object.keys(root).sort(), [
      'FAILURE_REASONS',
      'FINISH_REASONS',
      'MetricsConfigError',
      'OMNI_CHANNELS',
      'OmniInstrumentation',
      'OmniMetricProducer',
      'OmniOptionError',
      'OmniPrometheusReader',
      'OmniShutdownError',
      'SLO_OBJECTIVES',
      'StatsThrottle',
      'createMultiModalCacheStats',
      'createPrefixCacheStats',
      'createSchedulerStats',
      'createSpecDecodingStats',
      'missedObjectives',
      'registerOmniMetrics',
      'serveClusterWorker',
      'startClusterPrimary',
    ]);
  });
});
