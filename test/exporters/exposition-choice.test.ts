import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chooseFormat } from '../../exporters/content-negotiation';
import { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE } from '../../exporters/exposition/exposition-text';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { PROTOBUF_CONTENT_TYPE } from '../../exporters/protobuf-negotiation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';
import { expectPrinted } from '../support/console-capture';
import { httpGet } from '../support/http';

/** What Prometheus 2.42 sends: OpenMetrics preferred over the 0.0.4 text. */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

describe('prometheus.exposition: negotiate (default) or text, as vLLM answers', () => {
  const handles: OmniMetricsHandle[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((handle) => handle.shutdown()));
  });

  async function served(exposition?: 'negotiate' | 'text'): Promise<OmniMetricsHandle> {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      logIntervalSeconds: 0,
      prometheus: { host: '127.0.0.1', port: 0, ...(exposition === undefined ? {} : { exposition }) },
      processMetrics: false,
      selfCheck: false,
    });
    handles.push(handle);
    handle.pipeline.requestSucceeded(0.5, 'stop');
    return handle;
  }

  it('negotiate (the default): Prometheus gets OpenMetrics, a plain GET the 0.0.4 text', async () => {
    const handle = await served();
    const url = handle.prometheusServer?.url as string;
    const scraped = await httpGet(url, { Accept: PROMETHEUS_ACCEPT });
    assert.equal(scraped.headers['content-type'], OPENMETRICS_CONTENT_TYPE);
    assert.ok(scraped.body.endsWith('# EOF\n'));
    assert.equal((await httpGet(url)).headers['content-type'], TEXT_CONTENT_TYPE);
  });

  // prometheus_client >= 0.23 (client_python #1177, prometheus_client/openmetrics/exposition.py):
  // with no `escaping=` it prints `# TYPE sglang:token_usage gauge` then `sglang_token_usage 42.0`,
  // so a Prometheus 2.x stores the series under the underscore name. Ours keeps the colon.
  it("OpenMetrics for Prometheus 2.x's Accept (no `escaping=`): every sample keeps the colons of its `# TYPE` name", async () => {
    const handle = await served();
    const scraped = await httpGet(handle.prometheusServer?.url as string, { Accept: PROMETHEUS_ACCEPT });
    assert.equal(scraped.headers['content-type'], OPENMETRICS_CONTENT_TYPE);
    let family = '';
    let samples = 0;
    for (const line of scraped.body.split('\n')) {
      if (line.startsWith('# TYPE ')) family = line.split(' ')[2] as string;
      if (line === '' || line.startsWith('#')) continue;
      const name = /^[^{ ]+/.exec(line)?.[0] ?? '';
      assert.ok(name.startsWith(family) && family !== '', `${name} belongs to # TYPE ${family}`);
      samples += 1;
    }
    assert.ok(scraped.body.includes('\nvllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 1.0\n'), 'a colon-named counter sample');
    assert.ok(samples > 50, `${samples} samples checked`);
  });

  it("text: every scrape gets the 0.0.4 text whatever it accepts, the bytes metricsText('text') renders", async () => {
    const handle = await served('text');
    const url = handle.prometheusServer?.url as string;
    for (const accept of [PROMETHEUS_ACCEPT, 'application/openmetrics-text', undefined]) {
      const scraped = await httpGet(url, accept === undefined ? {} : { Accept: accept });
      assert.equal(scraped.status, 200);
      assert.equal(scraped.headers['content-type'], TEXT_CONTENT_TYPE, String(accept));
      assert.equal(scraped.body, await handle.metricsText('text'));
    }
    // The `_created` companions print as the 0.0.4 text's gauge families, which Prometheus stores as series.
    assert.ok((await handle.metricsText('text')).includes('# TYPE vllm:omni_requests_success_created gauge\n'));
  });

  it('text: a scraper that prefers protobuf gets the 0.0.4 text too, native histograms on (said at startup)', async () => {
    const handle = await expectPrinted(
      [
        "omni-otel-metrics: nativeHistograms with prometheus.exposition 'text': /metrics serves the 0.0.4 text only, so scrapers get the classic buckets (OTLP and metric producers still carry the exponential points). Use exposition 'negotiate' (the default) to offer the protobuf exposition.",
      ],
      () =>
        registerOmniMetrics({
          modelName: 'm',
          logStats: true,
          logIntervalSeconds: 0,
          prometheus: { host: '127.0.0.1', port: 0, exposition: 'text' },
          nativeHistograms: true,
          processMetrics: false,
          selfCheck: false,
        }),
    );
    handles.push(handle);
    handle.pipeline.requestSucceeded(0.5, 'stop');
    const scraped = await httpGet(handle.prometheusServer?.url as string, { Accept: `${PROTOBUF_CONTENT_TYPE},${PROMETHEUS_ACCEPT}` });
    assert.equal(scraped.headers['content-type'], TEXT_CONTENT_TYPE);
    assert.equal(scraped.body, await handle.metricsText('text'));
  });

  it('a handler mounted on your own server follows the reader too', async () => {
    const handle = await served('text');
    const server = createServer(handle.metricsHandler());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const scraped = await httpGet(`http://127.0.0.1:${port}/metrics`, { Accept: PROMETHEUS_ACCEPT });
      assert.equal(scraped.headers['content-type'], TEXT_CONTENT_TYPE);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('the choice, the reader option and their checks', () => {
    assert.equal(chooseFormat('text', PROMETHEUS_ACCEPT), 'text');
    assert.equal(chooseFormat('negotiate', PROMETHEUS_ACCEPT), 'openmetrics');
    assert.equal(chooseFormat(undefined, PROMETHEUS_ACCEPT), 'openmetrics');
    assert.equal(new OmniPrometheusReader().expositionChoice, 'negotiate');
    assert.equal(new OmniPrometheusReader({ exposition: 'text' }).expositionChoice, 'text');
    assert.throws(() => new OmniPrometheusReader({ exposition: 'protobuf' as never }), OmniOptionError);
  });
});
