import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { OTLP_PROTOCOLS, type OtlpProtocol } from '../../exporters/otlp/types';
import { registerOmniMetrics } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';
import { fromOtlp, metricNamed, pointWith } from './support/normalize';
import { startOtlpReceiver } from './support/otlp-receiver';

const FIXTURE = join(__dirname, 'fixtures', 'env-only.ts');

/** Runs the fixture with exactly `env` (no PATH, nothing inherited). */
function startFixture(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', FIXTURE], { env, cwd: join(__dirname, '..', '..'), stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function stopFixture(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.stdin?.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  const [code] = (await exited) as [number | null];
  clearTimeout(timer);
  return code;
}

describe('environment-only configuration (child process, OTEL_* variables only)', function () {
  this.timeout(20_000);

  // The endpoint comes once from the generic variable (HTTP appends v1/metrics) and once from the metrics one.
  const variants: Array<{ protocol: OtlpProtocol; endpointVariable: string; protocolVariable: string }> = OTLP_PROTOCOLS.map((protocol, index) => ({
    protocol,
    endpointVariable: index % 2 === 0 ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
    protocolVariable: index % 2 === 0 ? 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL',
  }));

  for (const { protocol, endpointVariable, protocolVariable } of variants) {
    it(`${protocol}: exports on the 200 ms interval with the resource from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES`, async () => {
      const receiver = await startOtlpReceiver(protocol);
      const endpoint = endpointVariable === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? receiver.baseEndpoint : receiver.endpoint;
      const { child, output } = startFixture({
        OTEL_METRICS_EXPORTER: 'OTLP',
        [protocolVariable]: protocol,
        [endpointVariable]: endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-from-env=generic,x-both=generic',
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-both=metrics',
        OTEL_METRIC_EXPORT_INTERVAL: '200',
        OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'Cumulative',
        OTEL_SERVICE_NAME: 'env-only-service',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test%20env,service.name=overridden',
      });
      try {
        const [first, second] = await receiver.waitForRequests(2, 8000).catch((error: Error) => {
          throw new Error(`${error.message}; child output: ${output()}`);
        });
        assert.ok(first && second);
        assert.match(output(), /ready without prometheus server/, 'OTEL_METRICS_EXPORTER=otlp starts no Prometheus server');
        assert.deepEqual(receiver.errors, []);

        const a = fromOtlp(first.body);
        const b = fromOtlp(second.body);
        assert.equal(a.resource['service.name'], 'env-only-service', 'OTEL_SERVICE_NAME wins over service.name in OTEL_RESOURCE_ATTRIBUTES');
        assert.equal(a.resource['deployment.environment'], 'test env');
        assert.equal(first.headers['x-from-env'], 'generic');
        assert.equal(first.headers['x-both'], 'metrics', 'the metrics-specific header wins');

        const labels = { model_name: 'env-model', stage: '0', replica: '0' };
        for (const shape of [a, b]) {
          assert.equal(pointWith(metricNamed(shape, 'vllm:omni_stage_outputs_queue_size'), labels)?.value, 2);
          assert.equal(pointWith(metricNamed(shape, 'vllm:omni_stage_inflight_requests'), labels)?.value, 1);
        }
        // Two collections 200 ms apart (not the 60 s default).
        const time = (shape: typeof a) => BigInt(pointWith(metricNamed(shape, 'vllm:omni_stage_outputs_queue_size'), labels)?.timeUnixNano ?? '0');
        const gapMs = Number(time(b) - time(a)) / 1e6;
        // Two exports arrived within 8 s, far below the 60 s default; not before the 200 ms interval either.
        assert.ok(gapMs >= 150, `export interval ${gapMs} ms`);
      } finally {
        const code = await stopFixture(child);
        await receiver.close();
        assert.equal(code, 0, output());
      }
    });
  }
});

describe('invalid OTEL_* values fail at startup, naming the variable and the accepted values', () => {
  const saved = new Map<string, string | undefined>();
  const setEnv = (variables: Record<string, string>): void => {
    for (const [name, value] of Object.entries(variables)) {
      if (!saved.has(name)) saved.set(name, process.env[name]);
      process.env[name] = value;
    }
  };
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    saved.clear();
  });

  // The third element: the option group the error names, when the variable is checked together with the `otlp` options.
  const cases: Array<[Record<string, string>, string, string?]> = [
    [{ OTEL_METRICS_EXPORTER: 'otlp,jaeger' }, 'OTEL_METRICS_EXPORTER must be a comma-separated list of prometheus, otlp, console, none; got "otlp,jaeger"'],
    [{ OTEL_METRICS_EXPORTER: 'none,otlp' }, 'OTEL_METRICS_EXPORTER must be "none" alone or a list without "none"; got "none,otlp"'],
    [{ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'thrift' }, 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL must be one of http/protobuf, http/json, grpc; got "thrift"'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }, 'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, grpc; got "http"'],
    [{ OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '10s' }, 'OTEL_EXPORTER_OTLP_METRICS_TIMEOUT must be a positive integer number of milliseconds; got "10s"'],
    [{ OTEL_EXPORTER_OTLP_TIMEOUT: '0' }, 'OTEL_EXPORTER_OTLP_TIMEOUT must be a positive integer number of milliseconds; got "0"'],
    [{ OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'zstd' }, 'OTEL_EXPORTER_OTLP_METRICS_COMPRESSION must be one of gzip, none; got "zstd"'],
    [{ OTEL_EXPORTER_OTLP_COMPRESSION: 'deflate' }, 'OTEL_EXPORTER_OTLP_COMPRESSION must be one of gzip, none; got "deflate"'],
    [{ OTEL_METRIC_EXPORT_INTERVAL: '-5' }, 'OTEL_METRIC_EXPORT_INTERVAL must be a positive integer number of milliseconds; got "-5"'],
    [{ OTEL_METRIC_EXPORT_TIMEOUT: '1.5' }, 'OTEL_METRIC_EXPORT_TIMEOUT must be a positive integer number of milliseconds; got "1.5"'],
    [
      { OTEL_METRIC_EXPORT_INTERVAL: '1000', OTEL_METRIC_EXPORT_TIMEOUT: '5000' },
      'OTEL_METRIC_EXPORT_TIMEOUT (5000) must not exceed OTEL_METRIC_EXPORT_INTERVAL (1000)',
      'otlp',
    ],
    [
      { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'sometimes' },
      'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE must be one of cumulative, delta, lowmemory; got "sometimes"',
    ],
    [
      { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'not a url' },
      'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT must be an http:// or https:// URL (or host:port for grpc); got "not a url"',
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' },
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL for protocol http/protobuf; got "collector:4317"',
      'otlp',
    ],
    // Header values (and an entry that may be a bare token) are never printed.
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'novalue' },
      'OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value pairs; got "<redacted>" (entry 1 is not key=value)',
    ],
    [
      { OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'a=%zz' },
      'OTEL_EXPORTER_OTLP_METRICS_HEADERS must be a comma-separated list of key=value pairs with percent-encoded values; got "a=<redacted>" (entry 1 is not percent-encoded)',
    ],
    [{ OTEL_RESOURCE_ATTRIBUTES: '=x' }, 'OTEL_RESOURCE_ATTRIBUTES must be a comma-separated list of key=value pairs; got "=x" (entry 1 is not key=value)'],
  ];

  for (const [variables, message, group = 'environment'] of cases) {
    it(Object.keys(variables).join(' + '), async () => {
      setEnv(variables);
      await assert.rejects(registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false }), (error: Error) => {
        assert.ok(error instanceof OmniOptionError);
        assert.equal(error.option, group);
        assert.equal(error.message, `omni-otel-metrics: ${message}`);
        return true;
      });
    });
  }
});
