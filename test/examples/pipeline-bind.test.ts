import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { optionsFromEnv, PIPELINE_VARIABLES } from '../../examples/pipeline-env';
import { startReferencePipeline } from '../../examples/reference-pipeline';
import { httpGet } from '../support/http';

const QUIET = { info: () => undefined };

function occupy(): Promise<Server> {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('examples: where the reference pipeline listens', function () {
  this.timeout(30_000);

  it('binds loopback by default and reports the addresses it really bound', async () => {
    const pipeline = await startReferencePipeline({ port: 0, metricsPort: 0, profile: 'fast', logIntervalSeconds: 0, logSink: QUIET });
    try {
      assert.match(pipeline.apiAddress, /^127\.0\.0\.1:\d+$/);
      assert.match(pipeline.metricsAddress ?? '', /^127\.0\.0\.1:\d+$/);
      assert.equal(pipeline.apiUrl, `http://${pipeline.apiAddress}`);
      assert.equal(pipeline.metricsUrl, `http://${pipeline.metricsAddress}/metrics`);
      assert.equal((await httpGet(pipeline.metricsUrl)).status, 200);
    } finally {
      await pipeline.stop();
    }
  });

  it('an API port clash names the address and the variable that moves it, and leaves nothing running', async () => {
    const taken = await occupy();
    const port = (taken.address() as AddressInfo).port;
    const servers = process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    try {
      await assert.rejects(
        startReferencePipeline({ port, metricsPort: 0, profile: 'fast', logIntervalSeconds: 0, logSink: QUIET }),
        (error: Error) =>
          error.message ===
          `the reference pipeline's API cannot listen on 127.0.0.1:${port}: the port is in use by another process. Set PORT (the \`port\` option; 0 picks a free port) or HOST (\`host\`).`,
      );
      // Closing is asynchronous: the servers' handles go within a few turns of the event loop.
      const open = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
      for (let i = 0; i < 100 && open() > servers; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(open(), servers, 'the metrics server and the failed API server were closed again');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('reads HOST, PORT and OpenTelemetry’s OTEL_EXPORTER_PROMETHEUS_HOST / _PORT (METRICS_PORT an alias); docs/development.md and examples/README.md document every variable', () => {
    assert.deepEqual(
      [optionsFromEnv({}).host, optionsFromEnv({}).port, optionsFromEnv({}).metricsHost, optionsFromEnv({}).metricsPort],
      ['127.0.0.1', 8000, '127.0.0.1', 9464],
    );
    const wide = optionsFromEnv({ HOST: '0.0.0.0', PORT: '8080', OTEL_EXPORTER_PROMETHEUS_PORT: '9500' });
    assert.deepEqual([wide.host, wide.port, wide.metricsHost, wide.metricsPort], ['0.0.0.0', 8080, '0.0.0.0', 9500]);
    const split = optionsFromEnv({ OTEL_EXPORTER_PROMETHEUS_HOST: '::1', METRICS_PORT: '9600' });
    assert.deepEqual([split.host, split.metricsHost, split.metricsPort], ['127.0.0.1', '::1', 9600]);
    assert.equal(optionsFromEnv({ OTEL_EXPORTER_PROMETHEUS_PORT: '9500', METRICS_PORT: '9500' }).metricsPort, 9500);
    assert.throws(() => optionsFromEnv({ OTEL_EXPORTER_PROMETHEUS_PORT: '9500', METRICS_PORT: '9600' }), {
      message: 'OTEL_EXPORTER_PROMETHEUS_PORT (9500) and METRICS_PORT (9600) disagree; set one of them',
    });
    assert.throws(() => optionsFromEnv({ OTEL_EXPORTER_PROMETHEUS_PORT: 'x' }), {
      message: 'OTEL_EXPORTER_PROMETHEUS_PORT must be an integer from 0 to 65535; got "x"',
    });
    assert.deepEqual(Object.keys(PIPELINE_VARIABLES), [
      'HOST',
      'PORT',
      'OTEL_EXPORTER_PROMETHEUS_HOST',
      'OTEL_EXPORTER_PROMETHEUS_PORT',
      'REPLICAS',
      'IMAGE_REPLICAS',
      'ADMIN_TOKEN',
      'MODEL',
      'SEED',
      'PROFILE',
      'TRACING',
      'NATIVE_HISTOGRAMS',
      'SLO_FIRST_OUTPUT_SECONDS',
      'SLO_E2E_SECONDS',
      'SLO_TPOT_SECONDS',
      'SLO_AUDIO_TTFP_SECONDS',
      'SLO_AUDIO_RTF',
    ]);
    const root = join(__dirname, '..', '..');
    for (const doc of [join('docs', 'development.md'), join('examples', 'README.md')]) {
      const text = readFileSync(join(root, doc), 'utf8');
      for (const variable of Object.keys(PIPELINE_VARIABLES)) assert.ok(text.includes(`\`${variable}\``), `${doc} documents ${variable}`);
    }
  });

  it('npm start prints the addresses it bound (loopback)', async () => {
    const root = join(__dirname, '..', '..');
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'examples', 'main.ts')], {
      cwd: root,
      env: { ...process.env, PORT: '0', OTEL_EXPORTER_PROMETHEUS_PORT: '0', PROFILE: 'fast', HOST: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 20_000;
      while (!output.includes('Ctrl-C stops.') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const listening = /listening +API on (127\.0\.0\.1:\d+), \/metrics on (127\.0\.0\.1:\d+) \(no authentication; HOST and PORT move them\)/.exec(output);
      assert.ok(listening, output);
      assert.ok(output.includes(`OpenAI API     http://${listening[1]}/v1`), output);
      assert.ok(output.includes(`metrics        http://${listening[2]}/metrics`), output);
    } finally {
      child.kill('SIGINT');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
