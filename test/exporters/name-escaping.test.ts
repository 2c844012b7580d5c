import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import { askedEscaping } from '../../exporters/content-negotiation';
import { ESCAPING_SCHEMES, escapedLabelName, escapedMetricName } from '../../exporters/exposition/name-escaping';
import { PROTOBUF_CONTENT_TYPE } from '../../exporters/protobuf-negotiation';
import { decodeMetricFamilies } from '../support/prometheus-protobuf';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { httpGet, httpGetBytes } from '../support/http';

const OPENMETRICS = 'application/openmetrics-text';
const TEXT = 'text/plain';
const PROTOBUF_ACCEPT = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

/** What Prometheus 3.16 sends with its default `scrape_protocols`. */
const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,' +
  'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3';

describe('the `escaping` a scraper asks for (UTF-8 name escaping schemes)', () => {
  it('is the scheme of the highest-q entry of the answered type that names one', () => {
    assert.equal(askedEscaping(PROMETHEUS_3_ACCEPT, OPENMETRICS), 'allow-utf-8');
    assert.equal(askedEscaping(PROMETHEUS_3_ACCEPT, TEXT), 'allow-utf-8');
    assert.equal(askedEscaping('text/plain;version=1.0.0;escaping=underscores', TEXT), 'underscores');
    assert.equal(askedEscaping('text/plain;version=1.0.0;escaping=values', TEXT), 'values');
    assert.equal(askedEscaping('application/openmetrics-text;version=1.0.0;escaping=dots', OPENMETRICS), 'dots');
    const accept = 'application/openmetrics-text;version=1.0.0;escaping=values;q=0.2,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.9';
    assert.equal(askedEscaping(accept, OPENMETRICS), 'allow-utf-8');
  });

  it('reads a scheme Prometheus does not define as `underscores`', () => {
    assert.equal(askedEscaping('application/openmetrics-text;version=1.0.0;escaping=no-such', OPENMETRICS), 'underscores');
  });

  it('is none when the scraper named none for that type, or only with q=0', () => {
    assert.equal(askedEscaping(undefined, TEXT), undefined);
    assert.equal(askedEscaping('text/plain;version=0.0.4', TEXT), undefined);
    assert.equal(askedEscaping(PROMETHEUS_3_ACCEPT, 'application/vnd.google.protobuf'), undefined);
    assert.equal(askedEscaping('application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0', OPENMETRICS), undefined);
  });

  it('property: any Accept header gives undefined or one of the four schemes, never a throw', () => {
    const schemes = new Set([undefined, ...ESCAPING_SCHEMES]);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom(OPENMETRICS, TEXT), (accept, type) => {
        assert.ok(schemes.has(askedEscaping(accept, type)));
      }),
      { numRuns: 500 },
    );
  });
});

describe("names escaped as prometheus/common's EscapeName escapes them", () => {
  it("leaves legacy names alone under every scheme, the catalog's colons included", () => {
    for (const escaping of ['underscores', 'dots', 'values'] as const) {
      assert.equal(escapedMetricName('vllm:num_requests_running', escaping), 'vllm:num_requests_running');
      assert.equal(escapedLabelName('model_name', escaping), 'model_name');
    }
  });

  it('escapes other names by the scheme: the examples of the Prometheus escaping-schemes page, and more', () => {
    assert.equal(escapedMetricName('metric.name/with/slashes', 'underscores'), 'metric_name_with_slashes');
    assert.equal(escapedMetricName('metric.name.with.dots', 'dots'), 'metric_dot_name_dot_with_dot_dots');
    assert.equal(escapedMetricName('http_server.duration', 'dots'), 'http__server_dot_duration');
    assert.equal(escapedMetricName('9lives', 'dots'), '__lives');
    assert.equal(escapedMetricName('a.b', 'values'), 'U__a_2e_b');
    assert.equal(escapedMetricName('a_b.c€', 'values'), 'U__a__b_2e_c_20ac_');
    assert.equal(escapedMetricName('lone\uD800', 'values'), 'U__lone_fffd_');
    assert.equal(escapedLabelName('otel.metric.overflow', 'dots'), 'otel_dot_metric_dot_overflow');
    assert.equal(escapedLabelName('a:b', 'dots'), 'a__b', 'a colon is no label-name character');
  });

  it('property: what `dots` escapes, Prometheus reads back (UnescapeName), for names of legacy characters and dots', () => {
    const name = fc.stringMatching(/^[a-zA-Z_.][a-zA-Z0-9_.:]{0,20}$/).filter((text) => !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(text));
    fc.assert(
      fc.property(name, (text) => {
        const escaped = escapedMetricName(text, 'dots');
        assert.match(escaped, /^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
        assert.equal(escaped.replace(/_dot_/g, '.').replace(/__/g, '_'), text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a scrape answers the escaping asked for', () => {
  let handle: OmniMetricsHandle;
  before(async () => {
    handle = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      logIntervalSeconds: 0,
      prometheus: { host: '127.0.0.1', port: 0 },
      processMetrics: false,
      selfCheck: false,
      nativeHistograms: true,
    });
    (handle.meterProvider as MeterProvider).getMeter('app').createCounter('app.jobs').add(2, { 'http.route': '/a' });
    handle.pipeline.requestSucceeded(0.5, 'stop');
  });
  after(() => handle.shutdown());

  const url = (): string => `http://127.0.0.1:${handle.prometheusServer?.port}/metrics`;

  it("answers Prometheus 3's Accept with OpenMetrics 1.0.0 and `escaping=allow-utf-8`, names as underscores print them; a scraper that names no scheme gets none", async () => {
    const asked = await httpGet(url(), { Accept: PROMETHEUS_3_ACCEPT });
    assert.equal(asked.headers['content-type'], 'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8');
    assert.match(asked.body, /^vllm:omni_[a-z_]+\{/m, 'sample names keep their colons');
    assert.match(asked.body, /^app_jobs_total\{http_route="\/a"\} 2\.0$/m);
    const plain = await httpGet(url(), { Accept: 'text/plain;version=0.0.4' });
    assert.equal(plain.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  });

  for (const [escaping, family, sample] of [
    ['dots', 'app_dot_jobs', 'app_dot_jobs_total{http_dot_route="/a"} 2.0'],
    ['values', 'U__app_2e_jobs', 'U__app_2e_jobs_total{U__http_2e_route="/a"} 2.0'],
    ['underscores', 'app_jobs', 'app_jobs_total{http_route="/a"} 2.0'],
  ] as const) {
    it(`escaping=${escaping}: names and label names that are not legacy ones escaped that way, in OpenMetrics and protobuf; the catalog's unchanged`, async () => {
      const openMetrics = await httpGet(url(), { Accept: `application/openmetrics-text;version=1.0.0;escaping=${escaping}` });
      assert.equal(openMetrics.headers['content-type'], `application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=${escaping}`);
      assert.ok(openMetrics.body.includes(`# TYPE ${family} counter\n`), openMetrics.body);
      assert.ok(openMetrics.body.split('\n').includes(sample));
      assert.match(openMetrics.body, /^vllm:omni_requests_success_total\{finished_reason="stop",model_name="m"\} 1\.0$/m);

      const protobuf = await httpGetBytes(url(), { Accept: `${PROTOBUF_ACCEPT};escaping=${escaping}` });
      assert.equal(protobuf.headers['content-type'], `${PROTOBUF_CONTENT_TYPE}; escaping=${escaping}`);
      const jobs = decodeMetricFamilies(protobuf.body).find((one) => one.name === `${family}_total`);
      assert.deepEqual(jobs?.metric[0]?.label, [{ name: sample.slice(sample.indexOf('{') + 1, sample.indexOf('=')), value: '/a' }]);
    });
  }
});
