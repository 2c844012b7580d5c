import assert from 'node:assert/strict';
import { docPrograms, runDocProgram } from './doc-programs';

/**
 * docs/node-sdk.md's application, as a user builds it: NodeSDK with the HTTP instrumentation in
 * OpenTelemetry's ES module layout (`node --import ./telemetry.mjs app.mjs`), the package
 * registered with `meterProvider: 'external'` and no `exemplars` option. NodeSDK registers its
 * tracer provider in `sdk.start()`, after the registration: the request counter must still carry
 * the exemplar of the HTTP request the instrumentation traced.
 */
describe('docs/node-sdk.md: a NodeSDK application in the --import layout', function () {
  this.timeout(60_000);

  it('serves the exemplar of a traced HTTP request, with no exemplars option', async () => {
    const [program] = docPrograms('docs/node-sdk.md');
    assert.ok(program, 'docs/node-sdk.md has a program that runs as written');
    assert.deepEqual(program.nodeArgs, ['--import', './telemetry.mjs', './app.mjs']);
    assert.doesNotMatch([...program.files.values()].join('\n'), /exemplars:/);
    const { stdout, stderr } = await runDocProgram(program);
    const [traced, counter, own, ...rest] = stdout.trimEnd().split('\n');
    const traceId = /^traced request ([0-9a-f]{32})$/.exec(traced ?? '')?.[1];
    assert.ok(traceId !== undefined && !/^0+$/.test(traceId), stdout);
    assert.match(
      counter ?? '',
      new RegExp(`^vllm:omni_requests_success_total\\{finished_reason="stop",model_name="qwen"\\} 1\\.0 # \\{span_id="[0-9a-f]{16}",trace_id="${traceId}"\\} 1\\.0 \\d+\\.\\d+$`),
    );
    assert.equal(own, 'app_http_requests_total 1.0');
    assert.deepEqual(rest, ['omni-otel-metrics self-check: 1 request observed; every expected family received data']);
    assert.equal(stderr, '');
  });
});
