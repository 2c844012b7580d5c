import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { renderStore } from '../support/exposition';
import { ProcessCollector } from '../../instrumentation/process/process-collector';
import type { ProcReader } from '../../instrumentation/process/proc-files';
import { OmniMetricProducer } from '../../views/store/metric-producer';
import { withWarnings } from '../views/store/store-fixture';
import { processStore, sampleValue } from './process-fixture';

const FAILING_PROC: ProcReader = {
  readFile: (path) => {
    throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' });
  },
  readDir: (path) => {
    throw Object.assign(new Error(`ENOENT: no such file or directory, scandir '${path}'`), { code: 'ENOENT' });
  },
};

describe('process families: a failing /proc never fails a scrape', () => {
  it('every /proc read throwing: the scrape succeeds, those values are left out, each source warned about once', () => {
    const store = processStore();
    const collector = new ProcessCollector(store, { procfs: true, proc: FAILING_PROC });
    store.addCollectHook(() => collector.collect());
    const { result: texts, warnings } = withWarnings(() => [1, 2, 3].map(() => renderStore(store, { format: 'text', createdSeries: true }).toString('utf8')));
    for (const text of texts) {
      for (const name of ['process_virtual_memory_bytes', 'process_start_time_seconds', 'process_cpu_seconds_total', 'process_open_fds', 'process_max_fds']) {
        assert.equal(sampleValue(text, name), undefined, name);
        assert.ok(text.includes(`# TYPE ${name} `), `${name} is still announced`);
      }
      assert.ok((sampleValue(text, 'process_resident_memory_bytes') ?? 0) > 0, 'resident memory does not come from the reader');
    }
    assert.equal(warnings.length, 3, warnings.join('\n'));
    assert.ok(warnings.some((warning) => warning.includes('/proc/self/stat')));
    assert.ok(warnings.some((warning) => warning.includes('/proc/self/fd')));
    assert.ok(warnings.some((warning) => warning.includes('/proc/self/limits')));
  });

  it('a read that starts failing leaves the values it gave as they were', () => {
    let failing = false;
    const real: ProcReader = {
      readFile: (path) => (failing ? FAILING_PROC.readFile(path) : readFileSync(path, 'latin1')),
      readDir: (path) => readdirSync(path),
    };
    const store = processStore();
    const collector = new ProcessCollector(store, { procfs: true, proc: real });
    store.addCollectHook(() => collector.collect());
    const before = renderStore(store, { format: 'text', createdSeries: true }).toString('utf8');
    failing = true;
    const { result: after } = withWarnings(() => renderStore(store, { format: 'text', createdSeries: true }).toString('utf8'));
    for (const name of ['process_virtual_memory_bytes', 'process_start_time_seconds', 'process_cpu_seconds_total', 'process_max_fds']) {
      assert.equal(sampleValue(after, name), sampleValue(before, name), name);
    }
  });

  it('a collect hook that throws: the scrape and the export still succeed, warned once', async () => {
    const store = processStore();
    store.addCollectHook(function brokenHook() {
      throw new Error('boom');
    });
    const { result, warnings } = withWarnings(() => renderStore(store, { format: 'text', createdSeries: true }).toString('utf8'));
    assert.ok(result.includes('# TYPE process_open_fds gauge'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /collect hook brokenHook threw/);
    const { resourceMetrics, errors } = await new OmniMetricProducer({ store }).collect();
    assert.deepEqual(errors, []);
    assert.ok(resourceMetrics.scopeMetrics.length > 0);
    const text = await new OmniPrometheusReader({ store }).metricsText();
    assert.ok(text.includes('# TYPE process_cpu_seconds_total counter'));
  });

  it('a removed hook runs no more', () => {
    const store = processStore();
    let runs = 0;
    const remove = store.addCollectHook(() => runs++);
    renderStore(store, { format: 'text', createdSeries: true });
    remove();
    renderStore(store, { format: 'text', createdSeries: true });
    assert.equal(runs, 1);
  });

  it('away from Linux (no procfs): CPU seconds, start time and resident memory from Node; the rest left out', () => {
    const store = processStore();
    new ProcessCollector(store, { procfs: false, proc: FAILING_PROC }).collect();
    const text = renderStore(store, { format: 'text', createdSeries: true }).toString('utf8');
    assert.ok((sampleValue(text, 'process_cpu_seconds_total') ?? 0) > 0);
    assert.equal(sampleValue(text, 'process_start_time_seconds'), performance.timeOrigin / 1000);
    assert.ok((sampleValue(text, 'process_resident_memory_bytes') ?? 0) > 0);
    for (const name of ['process_virtual_memory_bytes', 'process_open_fds', 'process_max_fds']) assert.equal(sampleValue(text, name), undefined, name);
  });
});
