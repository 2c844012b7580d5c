import assert from 'node:assert/strict';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { optionsFromEnv, traceEndpointFromEnv } from '../../examples/pipeline-env';
import { warnOnExportFailure } from '../../examples/span-export-failures';

describe('examples: the reference pipeline environment (NATIVE_HISTOGRAMS, TRACING)', () => {
  it('NATIVE_HISTOGRAMS=1 turns native buckets on for every histogram family; 0 or unset leaves them off; anything else is refused', () => {
    assert.equal(optionsFromEnv({ NATIVE_HISTOGRAMS: '1' }).nativeHistograms, true);
    assert.equal(optionsFromEnv({ NATIVE_HISTOGRAMS: '0' }).nativeHistograms, undefined);
    assert.equal(optionsFromEnv({}).nativeHistograms, undefined);
    assert.throws(() => optionsFromEnv({ NATIVE_HISTOGRAMS: 'yes' }), { message: 'NATIVE_HISTOGRAMS must be 1 or 0; got "yes"' });
  });

  it('names where spans go, as the OTLP/HTTP trace exporter reads the environment', () => {
    assert.equal(traceEndpointFromEnv({}), 'http://localhost:4318/v1/traces');
    assert.equal(traceEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), 'http://collector:4318/v1/traces');
    assert.equal(
      traceEndpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9000/in' }),
      'http://traces:9000/in',
    );
  });

  it('warns when a span export fails, once per failing spell, and passes every result on', () => {
    const results: ExportResult[] = [
      { code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED 127.0.0.1:4318') },
      { code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED 127.0.0.1:4318') },
      { code: ExportResultCode.SUCCESS },
      { code: ExportResultCode.FAILED },
    ];
    const inner: SpanExporter = {
      export: (_spans, callback) => callback(results.shift() as ExportResult),
      shutdown: () => Promise.resolve(),
    };
    const warnings: string[] = [];
    const seen: ExportResultCode[] = [];
    const exporter = warnOnExportFailure(inner, 'http://localhost:4318/v1/traces', (line) => warnings.push(line));
    const spans = [{} as ReadableSpan, {} as ReadableSpan];
    for (let i = 0; i < 4; i++) exporter.export(spans, (result) => seen.push(result.code));
    assert.deepEqual(seen, [ExportResultCode.FAILED, ExportResultCode.FAILED, ExportResultCode.SUCCESS, ExportResultCode.FAILED]);
    assert.deepEqual(warnings, [
      'tracing: exporting 2 span(s) to http://localhost:4318/v1/traces failed (connect ECONNREFUSED 127.0.0.1:4318); spans are dropped until an export succeeds',
      'tracing: exporting 2 span(s) to http://localhost:4318/v1/traces failed (no reason given); spans are dropped until an export succeeds',
    ]);
  });
});
