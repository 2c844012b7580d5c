import assert from 'node:assert/strict';
import * as root from '../index';
import packageJson from '../package.json';

/**
 * The root entry is the product's whole API: what an application needs to register, hook its
 * classes (or call the recorders) and serve or push. A name added here is a promise to keep; the
 * API report (`npm run api`, part of `npm test`) fails on any change it does not carry.
 */
describe('the root entry', () => {
  it('exports exactly the application API (values; docs/api/omni-otel-metrics.api.md lists every name, types included)', () => {
    assert.deepEqual(Object.keys(root).sort(), [
      'FAILURE_REASONS',
      'FINISH_REASONS',
      'LogMetricExporter',
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

  it('is the only entry point: package.json exports `.` (and its own package.json), nothing else', () => {
    assert.deepEqual(Object.keys(packageJson.exports).sort(), ['.', './package.json']);
    assert.equal((packageJson as { typesVersions?: unknown }).typesVersions, undefined);
  });
});
