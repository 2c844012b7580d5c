import assert from 'node:assert/strict';
import { AggregationTemporality, DataPointType, type MetricData } from '@opentelemetry/sdk-metrics';
import { startProcessMetrics } from '../../instrumentation/process/process-metrics';
import { resolveCatalog } from '../../views/catalog/catalog';
import { OmniMetricProducer } from '../../views/store/metric-producer';
import { SeriesStore } from '../../views/store/series-store';
import { processStore } from './process-fixture';

async function collected(store: SeriesStore, producer = new OmniMetricProducer({ store })): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await producer.collect();
  assert.deepEqual(errors, []);
  return new Map(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((metric) => [metric.descriptor.name, metric]));
}

function numberValue(metric: MetricData | undefined): number {
  const value = metric?.dataPoints[0]?.value;
  assert.equal(typeof value, 'number');
  return value as number;
}

describe('process families: OmniMetricProducer (OTLP and any reader)', () => {
  it('collecting refreshes them: gauges as gauges, CPU seconds as a monotonic sum, GC durations as a histogram, no attributes', async () => {
    const store = processStore();
    const collector = startProcessMetrics(store);
    try {
      // Allocate until the GC observer has seen a collection (when one comes depends on the heap the rest of the suite left).
      let byName = await collected(store);
      for (let round = 0; round < 200 && !byName.has('nodejs_gc_duration_seconds'); round++) {
        Array.from({ length: 200_000 }, (_, i) => ({ i }));
        await new Promise((resolve) => setTimeout(resolve, 10));
        byName = await collected(store);
      }
      for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_version_info']) {
        assert.equal(byName.get(name)?.dataPointType, DataPointType.GAUGE, name);
      }
      const cpu = byName.get('process_cpu_seconds_total');
      assert.equal(cpu?.dataPointType, DataPointType.SUM);
      assert.equal(cpu?.dataPointType === DataPointType.SUM && cpu.isMonotonic, true);
      assert.equal(cpu?.aggregationTemporality, AggregationTemporality.CUMULATIVE);
      assert.deepEqual(cpu?.dataPoints[0]?.attributes, {});
      assert.deepEqual(cpu?.descriptor, {
        name: 'process_cpu_seconds_total',
        description: 'Total user and system CPU time spent in seconds.',
        unit: '',
        valueType: 1,
      });
      assert.ok(numberValue(byName.get('process_resident_memory_bytes')) > 0);
      assert.deepEqual(byName.get('process_open_fds')?.dataPoints[0]?.attributes, {});
      const gc = byName.get('nodejs_gc_duration_seconds');
      assert.equal(gc?.dataPointType, DataPointType.HISTOGRAM);
      assert.ok(gc?.dataPoints.every((point) => typeof point.attributes.kind === 'string'));
      const [major, minor, patch] = process.versions.node.split('.');
      assert.deepEqual(byName.get('nodejs_version_info')?.dataPoints[0]?.attributes, { version: process.version, major, minor, patch });
    } finally {
      collector.stop();
    }
  });

  it('each collection reads afresh: the heap gauge follows allocation', async () => {
    const store = processStore();
    const collector = startProcessMetrics(store);
    try {
      const producer = new OmniMetricProducer({ store });
      const first = numberValue((await collected(store, producer)).get('nodejs_heap_size_used_bytes'));
      const kept = Array.from({ length: 100_000 }, (_, i) => ({ i, text: `kept ${i}` }));
      const second = numberValue((await collected(store, producer)).get('nodejs_heap_size_used_bytes'));
      assert.ok(kept.length > 0);
      assert.notEqual(second, first);
    } finally {
      collector.stop();
    }
  });

  it('the otel naming scheme: instrument names without the unit token, UCUM units', async () => {
    const store = new SeriesStore(resolveCatalog({ processMetrics: true }), { modelName: 'm', naming: 'otel' });
    const collector = startProcessMetrics(store);
    try {
      const byName = await collected(store);
      assert.equal(byName.get('process_cpu')?.descriptor.unit, 's');
      assert.equal(byName.get('process_resident_memory')?.descriptor.unit, 'By');
      assert.equal(byName.get('process_open_fds')?.descriptor.unit, '{file_descriptor}');
    } finally {
      collector.stop();
    }
  });

  it('off: the producer has none of them', async () => {
    const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm' });
    const collector = startProcessMetrics(store);
    const names = [...(await collected(store)).keys()];
    collector.stop();
    assert.deepEqual(
      names.filter((name) => name.startsWith('process_') || name.startsWith('nodejs_')),
      [],
    );
  });
});
