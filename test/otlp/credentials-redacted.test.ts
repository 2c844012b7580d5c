import assert from 'node:assert/strict';
import { diag } from '@opentelemetry/api';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics } from '../../register';
import { packageDiag } from '../../views/common/package-diag';
import { captureConsole, withEnv } from '../support/console-capture';
import { startRefusingCollector } from './support/refusing-collector';

const SECRET = 'T0ken-s3cret';

function pushOnly(otlp: OmniMetricsOptions['otlp']): Promise<Awaited<ReturnType<typeof registerOmniMetrics>>> {
  return registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, exporters: ['otlp'], selfCheck: false, otlp });
}

describe('OTLP: URL credentials and header values never reach a log line or an error', function () {
  this.timeout(20_000);
  beforeEach(() => {
    diag.disable();
    packageDiag.resetLevel();
  });

  it('a failed export names the endpoint with *** for its userinfo, from the option and from OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const collector = await startRefusingCollector();
    try {
      const printed = await captureConsole(async () => {
        const fromOption = await pushOnly({
          protocol: 'http/json',
          endpoint: `http://otel:${SECRET}@127.0.0.1:${collector.port}/v1/metrics`,
          headers: { authorization: `Bearer ${SECRET}` },
        });
        await fromOption.forceFlush().catch(() => undefined);
        await fromOption.shutdown().catch(() => undefined);
        await withEnv(
          { OTEL_EXPORTER_OTLP_ENDPOINT: `http://otel:${SECRET}@127.0.0.1:${collector.port}`, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET}` },
          async () => {
            const fromVariable = await pushOnly({ protocol: 'http/protobuf' });
            await fromVariable.forceFlush().catch(() => undefined);
            await fromVariable.shutdown().catch(() => undefined);
          },
        );
      });
      const text = printed.map((line) => line.text);
      assert.deepEqual(
        text.filter((line) => line.includes(SECRET)),
        [],
      );
      const failures = text.filter((line) => line.includes('metrics export to'));
      assert.deepEqual(
        failures.map((line) => line.replace(/ failed \(.*\); /, ' failed (…); ')),
        [
          `omni-otel-metrics: metrics export to OTLP http/json http://***@127.0.0.1:${collector.port}/v1/metrics failed (…); the next export that gets through carries the totals (cumulative temporality)`,
          `omni-otel-metrics: metrics export to OTLP http/protobuf http://***@127.0.0.1:${collector.port}/v1/metrics failed (…); the next export that gets through carries the totals (cumulative temporality)`,
        ],
      );
    } finally {
      await collector.close();
    }
  });

  const refused: Array<[string, Record<string, string>, OmniMetricsOptions['otlp'], string]> = [
    [
      'OTEL_EXPORTER_OTLP_HEADERS with a token and a broken entry',
      { OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${SECRET},broken` },
      undefined,
      'omni-otel-metrics: OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value pairs; got "authorization=<redacted>,<redacted>" (entry 2 is not key=value)',
    ],
    [
      'OTEL_EXPORTER_OTLP_METRICS_HEADERS with a token that is not percent-encoded',
      { OTEL_EXPORTER_OTLP_METRICS_HEADERS: `x-token=${SECRET}%zz` },
      undefined,
      'omni-otel-metrics: OTEL_EXPORTER_OTLP_METRICS_HEADERS must be a comma-separated list of key=value pairs with percent-encoded values; got "x-token=<redacted>" (entry 1 is not percent-encoded)',
    ],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT with a password and a port out of range',
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://otel:${SECRET}@collector:99999` },
      undefined,
      'omni-otel-metrics: OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (or host:port for grpc); got "http://***@collector:99999"',
    ],
    [
      'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as user:password@host:port',
      { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `otel:${SECRET}@collector:4317` },
      undefined,
      'omni-otel-metrics: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT must be an http:// or https:// URL (or host:port for grpc); got "***@collector:4317"',
    ],
    [
      'otlp.endpoint of another scheme',
      {},
      { endpoint: `ftp://otel:${SECRET}@collector/v1/metrics` },
      'omni-otel-metrics: otlp.endpoint must be an http:// or https:// URL for protocol http/protobuf; got "ftp://***@collector/v1/metrics"',
    ],
    [
      'otlp.endpoint as a URL object',
      {},
      { endpoint: new URL(`http://otel:${SECRET}@collector:4318`) as unknown as string },
      'omni-otel-metrics: otlp.endpoint must be a non-empty URL string; got the URL object "http://***@collector:4318/"',
    ],
    [
      'otlp.headers with a value that is no string beside a token',
      {},
      { headers: { authorization: `Bearer ${SECRET}`, 'x-retries': 3 as unknown as string } },
      'omni-otel-metrics: otlp.headers must map header names to strings; got a number for "x-retries"',
    ],
    [
      'otlp.headers as one string',
      {},
      { headers: `authorization: Bearer ${SECRET}` as never },
      'omni-otel-metrics: otlp.headers must map header names to strings; got a string',
    ],
  ];
  for (const [what, variables, otlp, message] of refused) {
    it(`refuses ${what} without echoing the secret`, async () => {
      await withEnv(variables, async () => {
        await assert.rejects(pushOnly(otlp), (error: Error) => {
          assert.equal(error.message, message);
          return true;
        });
      });
    });
  }
});
