import assert from 'node:assert/strict';
import fc from 'fast-check';
import { answeredEscaping } from '../../exporters/content-negotiation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { httpGet } from '../support/http';

const OPENMETRICS = 'application/openmetrics-text';
const TEXT = 'text/plain';

/** What Prometheus 3.16 sends with its default `scrape_protocols`. */
const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,' +
  'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3';

describe('the `escaping` of a scrape answer (UTF-8 name escaping schemes)', () => {
  it('echoes the scheme asked with the answered type when the names come out unchanged under it', () => {
    assert.equal(answeredEscaping(PROMETHEUS_3_ACCEPT, OPENMETRICS), 'allow-utf-8');
    assert.equal(answeredEscaping(PROMETHEUS_3_ACCEPT, TEXT), 'allow-utf-8');
    assert.equal(answeredEscaping('text/plain;version=1.0.0;escaping=underscores', TEXT), 'underscores');
    assert.equal(answeredEscaping('text/plain;version=1.0.0;escaping=values', TEXT), 'values');
  });

  it('answers `underscores` (what the body follows) to `dots` or an unknown scheme', () => {
    assert.equal(answeredEscaping('application/openmetrics-text;version=1.0.0;escaping=dots', OPENMETRICS), 'underscores');
    assert.equal(answeredEscaping('application/openmetrics-text;version=1.0.0;escaping=no-such', OPENMETRICS), 'underscores');
  });

  it('names none when the scraper named none for that type, or only with q=0', () => {
    assert.equal(answeredEscaping(undefined, TEXT), undefined);
    assert.equal(answeredEscaping('text/plain;version=0.0.4', TEXT), undefined);
    assert.equal(answeredEscaping(PROMETHEUS_3_ACCEPT, 'application/vnd.google.protobuf'), undefined);
    assert.equal(answeredEscaping('application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0', OPENMETRICS), undefined);
  });

  it('takes the highest-q entry of the type that names a scheme', () => {
    const accept = 'application/openmetrics-text;version=1.0.0;escaping=values;q=0.2,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.9';
    assert.equal(answeredEscaping(accept, OPENMETRICS), 'allow-utf-8');
  });

  it('property: any Accept header gives undefined or one of the schemes the body follows, never a throw', () => {
    const schemes = new Set([undefined, 'allow-utf-8', 'underscores', 'values']);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom(OPENMETRICS, TEXT), (accept, type) => {
        assert.ok(schemes.has(answeredEscaping(accept, type)));
      }),
      { numRuns: 500 },
    );
  });

  describe('over HTTP', () => {
    let handle: OmniMetricsHandle;
    before(async () => {
      handle = await registerOmniMetrics({
        modelName: 'm',
        logStats: true,
        logIntervalSeconds: 0,
        prometheus: { host: '127.0.0.1', port: 0 },
        processMetrics: false,
        selfCheck: false,
      });
    });
    after(() => handle.shutdown());

    it("answers Prometheus 3's Accept with OpenMetrics 1.0.0 and `escaping=allow-utf-8`; a scraper that names no scheme gets none", async () => {
      const url = `http://127.0.0.1:${handle.prometheusServer?.port}/metrics`;
      const asked = await httpGet(url, { Accept: PROMETHEUS_3_ACCEPT });
      assert.equal(asked.headers['content-type'], 'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8');
      assert.match(asked.body, /^vllm:omni_[a-z_]+\{/m, 'sample names keep their colons');
      const plain = await httpGet(url, { Accept: 'text/plain;version=0.0.4' });
      assert.equal(plain.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    });
  });
});
