import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import { aggregateFamilies } from '../../exporters/cluster/cluster-primary';
import { mergeSnapshots } from '../../exporters/cluster/merge';
import { familiesSnapshot } from '../../exporters/exposition/snapshot-families';
import { writeProtobuf } from '../../exporters/exposition/protobuf-writer';
import { writeText } from '../../exporters/exposition/text-writer';
import { EMPTY_SNAPSHOT } from '../../exporters/snapshot';
import type { OmniMetricsHandle } from '../../register';
import { declaredFamilies } from '../../views/declared-families';
import { captureConsole } from '../support/console-capture';
import { needPeer, peerProgram } from '../support/peers/need-peer';
import { decodeMetricFamilies } from '../support/prometheus-protobuf';
import { checkMetrics } from '../support/promtool';
import { quietHandle } from '../support/quiet-handle';

/** Three clashes an application can make with names the exposition generates, beside one instrument that clashes with nothing. */
function recordClashingInstruments(handle: OmniMetricsHandle): void {
  const meter = (handle.meterProvider as MeterProvider).getMeter('app');
  meter.createCounter('app_x').add(1);
  meter.createGauge('app_x_created').record(5);
  meter.createHistogram('app_y').record(0.5);
  meter.createGauge('app_y_bucket').record(7);
  meter.createGauge('vllm:omni_requests_success').record(3);
  meter.createGauge('app_fine').record(1);
  handle.pipeline.requestSucceeded(0.4, 'stop');
}

const LEFT_OUT = [
  "omni-otel-metrics: the application's gauge app_x_created is left out of /metrics: its name app_x_created clashes with the family app_x_total, which is printed. Rename one of them.",
  "omni-otel-metrics: the application's gauge app_y_bucket is left out of /metrics: its name app_y_bucket clashes with the family app_y, which is printed. Rename one of them.",
  "omni-otel-metrics: the application's gauge vllm:omni_requests_success is left out of /metrics: its name vllm:omni_requests_success clashes with the family vllm:omni_requests_success_total, which is printed. Rename one of them.",
];

/** The families a text exposition declares, in order. */
function typeLines(text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith('# TYPE app') || line.startsWith('# TYPE vllm:omni_requests_success'));
}

const EXPECTED_TEXT_TYPES = [
  '# TYPE vllm:omni_requests_success_total counter',
  '# TYPE vllm:omni_requests_success_created gauge',
  '# TYPE app_x_total counter',
  '# TYPE app_x_created gauge',
  '# TYPE app_y histogram',
  '# TYPE app_y_created gauge',
  '# TYPE app_fine gauge',
];

describe('instruments whose names collide with names the exposition generates', function () {
  let handle: OmniMetricsHandle;
  let warnings: string[];
  let text: string;
  let openMetrics: string;

  before(async () => {
    handle = await quietHandle({ logStats: true, nativeHistograms: true });
    const lines = await captureConsole(async () => {
      recordClashingInstruments(handle);
      for (let i = 0; i < 5; i++) await handle.metricsText();
      text = await handle.metricsText();
      openMetrics = await handle.metricsText('openmetrics');
    });
    warnings = lines.filter((line) => line.method === 'warn').map((line) => line.text);
  });
  after(() => handle.shutdown());

  it('are left out of every format, the families they clash with printed once', async () => {
    assert.deepEqual(typeLines(text), EXPECTED_TEXT_TYPES);
    assert.deepEqual(
      openMetrics.split('\n').filter((line) => /^# TYPE (app|vllm:omni_requests_success)/.test(line)),
      ['# TYPE vllm:omni_requests_success counter', '# TYPE app_x counter', '# TYPE app_y histogram', '# TYPE app_fine gauge'],
    );
    const protobuf = decodeMetricFamilies((await handle.prometheusReader?.protobufBytes()) ?? Buffer.alloc(0)).map((family) => family.name);
    assert.deepEqual(
      protobuf.filter((name) => name.startsWith('app') || name.startsWith('vllm:omni_requests_success')),
      ['vllm:omni_requests_success_total', 'app_x_total', 'app_y', 'app_fine'],
    );
  });

  it('each said once, naming both families, however often /metrics is scraped', () => {
    assert.deepEqual(warnings, LEFT_OUT);
  });

  it('behind the node:cluster primary too: the workers keep their instruments, the primary leaves the clashes out', async () => {
    const workers = [await quietHandle({ logStats: true }), await quietHandle({ logStats: true })];
    try {
      for (const worker of workers) recordClashingInstruments(worker);
      const snapshots = await Promise.all(workers.map(async (worker) => familiesSnapshot(await worker.prometheusReader!.expositionFamilies())));
      const merged = mergeSnapshots(EMPTY_SNAPSHOT, JSON.parse(JSON.stringify(snapshots)), () => 'sum');
      const families = aggregateFamilies(merged, declaredFamilies(workers[0]!.catalog, 'm'));
      const served = writeText(families, { format: 'text', createdSeries: true });
      assert.deepEqual(typeLines(served), EXPECTED_TEXT_TYPES);
      assert.match(served, /^app_x_total 2\.0$/m);
      assert.deepEqual(
        decodeMetricFamilies(writeProtobuf(families, { createdSeries: true }))
          .map((family) => family.name)
          .filter((name) => name.startsWith('app')),
        ['app_x_total', 'app_y', 'app_fine'],
      );
    } finally {
      await Promise.all(workers.map((worker) => worker.shutdown()));
    }
  });

  describe('read by the real parsers', function () {
    needPeer('debian-prometheus', this);
    needPeer('debian-prometheus-client', this);

    it('promtool parses the text (only its lint findings, no parse error)', async () => {
      const result = await checkMetrics(text);
      assert.notEqual(result.exitCode, 1, result.findings.join('\n'));
    });

    it("prometheus_client's OpenMetrics parser reads the OpenMetrics (no clashing name)", () => {
      const script =
        'import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nprint(sum(len(f.samples) for f in p(sys.stdin.read())))';
      const samples = execFileSync(peerProgram('debian-prometheus-client', 'python'), ['-c', script], { input: openMetrics, encoding: 'utf8' });
      assert.ok(Number(samples) > 0);
    });
  });
});
