import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { renderStore } from '../support/exposition';
import { startProcessMetrics, type ProcessMetrics } from '../../instrumentation/process/process-metrics';
import { resolveCatalog } from '../../views/catalog/catalog';
import { PROCESS_FAMILIES } from '../../views/catalog/process-families';
import { SeriesStore } from '../../views/store/series-store';
import { headerLines, processStore, pythonProcessCollector, sampleLines } from './process-fixture';
import { needPeer } from '../support/peers/need-peer';

const PROCESS_NAMES = [
  'process_virtual_memory_bytes',
  'process_resident_memory_bytes',
  'process_start_time_seconds',
  'process_cpu_seconds_total',
  'process_open_fds',
  'process_max_fds',
];

function render(store: SeriesStore, format: 'text' | 'openmetrics' = 'text'): string {
  return renderStore(store, { format, createdSeries: true }).toString('utf8');
}

/**
 * prom-client's default metrics as it prints them, from a child process: `collectDefaultMetrics`
 * starts an event loop monitor and a GC observer that cannot be stopped again.
 */
function promClientDefaultMetrics(): string {
  const script =
    "const p = require('prom-client'); const r = new p.Registry(); p.collectDefaultMetrics({ register: r }); r.metrics().then((t) => { process.stdout.write(t); process.exit(0); });";
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: __dirname });
}

/** The family names in the order their TYPE lines appear. */
function familyOrder(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('# TYPE '))
    .map((line) => line.split(' ')[2] as string);
}

describe('process families: exposition', function () {
  needPeer('debian-prometheus-client', this);
  let store: SeriesStore;
  let collector: ProcessMetrics;

  beforeEach(() => {
    store = processStore();
    collector = startProcessMetrics(store);
  });

  afterEach(() => collector.stop());

  it("process_*: HELP and TYPE byte-identical to prometheus_client's ProcessCollector, in its order (0.0.4 text and OpenMetrics)", () => {
    const python = pythonProcessCollector();
    assert.equal(python.version, '0.16.0');
    for (const format of ['text', 'openmetrics'] as const) {
      const expected = headerLines(python[format], 'process_');
      assert.equal(expected.length, 12, `${format}: six families from Python`);
      assert.deepEqual(headerLines(render(store, format), 'process_'), expected, format);
    }
  });

  it("process_*: one unlabelled sample each, and no `_created` for the CPU counter (Python's has none)", () => {
    const python = pythonProcessCollector();
    for (const format of ['text', 'openmetrics'] as const) {
      const ours = sampleLines(render(store, format), 'process_').map((line) => line.split(' ')[0]);
      const theirs = sampleLines(python[format], 'process_').map((line) => line.split(' ')[0]);
      assert.deepEqual(ours, theirs, format);
      assert.deepEqual(ours, PROCESS_NAMES, format);
    }
  });

  it("nodejs_*: HELP and TYPE byte-identical to prom-client's collectDefaultMetrics", () => {
    const promClient = promClientDefaultMetrics();
    const ours = headerLines(render(store), 'nodejs_');
    const nodeFamilies = Object.values(PROCESS_FAMILIES).filter((family) => family.baseName.startsWith('nodejs_'));
    assert.equal(ours.length, 2 * nodeFamilies.length);
    for (let i = 0; i < ours.length; i += 2) {
      const help = ours[i] as string;
      const at = promClient.split('\n').indexOf(help);
      assert.ok(at >= 0, `prom-client prints ${help}`);
      assert.equal(promClient.split('\n')[at + 1], ours[i + 1]);
    }
  });

  it('nodejs_version_info carries the running version; nodejs_gc_duration_seconds has no `_created`', () => {
    const [major, minor, patch] = process.versions.node.split('.');
    const text = render(store);
    assert.ok(text.includes(`nodejs_version_info{major="${major}",minor="${minor}",patch="${patch}",version="${process.version}"} 1.0\n`));
    assert.ok(!text.includes('nodejs_gc_duration_created'));
    assert.ok(!render(store, 'openmetrics').includes('nodejs_gc_duration_created'));
  });

  it("runtime families first, then process_*, then the package's, as a Python vLLM prints its own", () => {
    // prometheus_client's default registry collects in registration order: its GC, platform and
    // process collectors register when it is imported, before vLLM registers its families.
    const pythonOrder = familyOrder(pythonProcessCollector('--order').text);
    assert.deepEqual(pythonOrder.slice(-7), [...PROCESS_NAMES, 'vllm:num_requests_running']);
    assert.ok(pythonOrder.indexOf('python_info') < pythonOrder.indexOf('process_virtual_memory_bytes'));

    const withUpstream = processStore({ logStats: true });
    const order = familyOrder(render(withUpstream));
    const firstProcess = order.indexOf('process_virtual_memory_bytes');
    assert.ok(
      order.slice(0, firstProcess).every((name) => name.startsWith('nodejs_')),
      'nodejs_* before process_*',
    );
    assert.deepEqual(order.slice(firstProcess, firstProcess + 6), PROCESS_NAMES);
    assert.ok(
      order.slice(firstProcess + 6).every((name) => name.startsWith('vllm:')),
      "the package's families after",
    );
  });

  it('the package’s counters keep their `_created`', () => {
    store.bind('pipeline.requestsSuccess', ['m', 'stop']).record(1);
    const text = render(store);
    assert.ok(text.includes('vllm:omni_requests_success_created{finished_reason="stop",model_name="m"}'));
  });

  it('the generic serializer (scope labels, engine pull) prints them the same: no `_created` for the CPU counter or the GC histogram', async () => {
    const reader = new OmniPrometheusReader({ store, withScopeLabels: true });
    const text = await reader.metricsText();
    assert.ok(/^process_cpu_seconds_total\{otel_scope_name="omni-otel-metrics",otel_scope_version="[^"]*"\} \d/m.test(text), text.slice(0, 2000));
    assert.ok(!text.includes('process_cpu_seconds_created'));
    assert.ok(!text.includes('nodejs_gc_duration_created'));
  });

  it('off by default in the catalog, and off with processMetrics: false: none of the families', () => {
    for (const catalog of [resolveCatalog({}), resolveCatalog({ processMetrics: false, logStats: true })]) {
      assert.deepEqual(
        catalog.families.filter((family) => family.group === 'process'),
        [],
      );
      const plain = new SeriesStore(catalog, { modelName: 'm' });
      const stop = startProcessMetrics(plain);
      const text = render(plain);
      stop.stop();
      assert.ok(!/^(# (HELP|TYPE) )?(process_|nodejs_)/m.test(text), 'no process_* or nodejs_* line');
    }
  });

  it('declared with the names, types and units the catalog gives, unlabelled but for gc kind and version info', () => {
    const catalog = resolveCatalog({ processMetrics: true });
    const families = catalog.families.filter((family) => family.group === 'process');
    assert.equal(families.length, 14);
    assert.deepEqual(
      families.filter((family) => family.labels.length > 0).map((family) => [family.name, family.labels]),
      [
        ['nodejs_version_info', ['version', 'major', 'minor', 'patch']],
        ['nodejs_gc_duration_seconds', ['kind']],
      ],
    );
    assert.deepEqual(catalog.byName('nodejs_gc_duration_seconds')?.buckets, [0.001, 0.01, 0.1, 1, 2, 5]);
    assert.equal(catalog.byName('process_cpu_seconds_total')?.type, 'counter');
    assert.equal(catalog.byName('process_cpu_seconds_total')?.otelName, 'process_cpu');
  });
});
