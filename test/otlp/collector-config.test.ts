import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { collectorPrometheusName } from '../../exporters/otlp/collector-naming';
import { resolveFullCatalog } from '../../views/catalog/catalog';

/** The example collector config keeps the direct endpoint's names (it cannot be run here: no collector binary). */
describe('examples/otel-collector/config.yaml', () => {
  const config = parse(readFileSync(join(__dirname, '..', '..', 'examples', 'otel-collector', 'config.yaml'), 'utf8'));

  it('receives OTLP over grpc and http', () => {
    assert.equal(config.receivers.otlp.protocols.grpc.endpoint, '0.0.0.0:4317');
    assert.equal(config.receivers.otlp.protocols.http.endpoint, '0.0.0.0:4318');
  });

  it('exposes and remote-writes with no suffixes and no scope labels, in one metrics pipeline', () => {
    const { prometheus, prometheusremotewrite } = config.exporters;
    assert.equal(prometheus.translation_strategy, 'UnderscoreEscapingWithoutSuffixes');
    assert.equal(prometheus.without_scope_info, true);
    assert.equal(prometheusremotewrite.add_metric_suffixes, false);
    assert.equal(prometheusremotewrite.target_info.enabled, false);
    assert.deepEqual(config.service.pipelines.metrics.receivers, ['otlp']);
    assert.deepEqual(config.service.pipelines.metrics.exporters, ['prometheus', 'prometheusremotewrite']);
  });

  it('under that strategy every family keeps its vLLM name (colons included)', () => {
    for (const family of resolveFullCatalog().families) {
      assert.equal(collectorPrometheusName(family.name, '', family.type, config.exporters.prometheus.translation_strategy), family.name);
    }
  });
});
