import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createMetricsHandler } from '../../exporters/metrics-handler';
import { needPeer } from '../support/peers/need-peer';
import { scenario } from '../support/prometheus-client-scenario';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { renderOurs } from '../support/python-parity';

const RENDER = join(__dirname, '..', 'exporters', 'fixtures', 'prometheus_client_render.py');

/** The scenario served by prometheus_client's own HTTP server, as vLLM serves it; resolves with its port. */
function servePython(python: string, input: unknown): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(python, [RENDER], { env: { ...process.env, PROMETHEUS_CLIENT_SERVE: '1' }, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin?.end(JSON.stringify(input));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`prometheus_client exited (${code}) before serving`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve({ child, port: (JSON.parse(line) as { port: number }).port }));
  });
}

/** Each series a job stored, by its labels without job and instance, with its value. */
async function stored(prometheus: PrometheusHandle, job: string): Promise<Map<string, string>> {
  const samples = await prometheus.query(`{job="${job}", __name__!~"up|scrape_.+"}`);
  return new Map(
    samples.map((sample) => {
      const { job: _job, instance: _instance, ...labels } = sample.metric;
      const key = Object.entries(labels)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
        .join(',');
      return [key, sample.value[1]];
    }),
  );
}

/**
 * Prometheus 3 scrapes the same observations twice: from the package's `/metrics` handler and from
 * the newest prometheus_client's own server (vLLM's way), each in the 0.0.4 text and in OpenMetrics
 * 1.0.0 (as Prometheus 3 asks for it: `escaping=allow-utf-8`). What it stores must be the same.
 */
describe('Prometheus 3 stores the same series from the package as from the newest prometheus_client', function () {
  const prometheus3 = needPeer('prometheus3', this);
  const newestClient = needPeer('prometheus-client', this);
  this.timeout(60_000);
  let prometheus: PrometheusHandle;
  let ours: Server;
  let python: ChildProcess | undefined;

  before(async function () {
    const { bin } = prometheus3.paths();
    const interpreter = newestClient.paths().bin.python as string;
    const { store, python: input } = scenario();
    ours = createServer(createMetricsHandler({ metricsText: async (format) => renderOurs(store, format, true) }));
    await new Promise<void>((resolve) => ours.listen(0, '127.0.0.1', resolve));
    const served = await servePython(interpreter, input);
    python = served.child;
    const address = (port: number): string => `127.0.0.1:${port}`;
    const text = { scrape_protocols: ['PrometheusText0.0.4'] };
    const openmetrics = { scrape_protocols: ['OpenMetricsText1.0.0'] };
    prometheus = await startPrometheus({
      binary: bin.prometheus,
      scrapeIntervalSeconds: 1,
      scrapeTargets: [
        { job: 'ours-text', target: address((ours.address() as AddressInfo).port), settings: text },
        { job: 'ours-openmetrics', target: address((ours.address() as AddressInfo).port), settings: openmetrics },
        { job: 'python-text', target: address(served.port), settings: text },
        { job: 'python-openmetrics', target: address(served.port), settings: openmetrics },
      ],
    });
    await prometheus.waitFor('count(up == 1)', (result) => result[0]?.value[1] === '4', 20_000);
  });

  after(async () => {
    await prometheus?.stop();
    python?.kill('SIGTERM');
    await new Promise((resolve) => ours?.close(resolve));
  });

  for (const format of ['text', 'openmetrics']) {
    it(`${format === 'text' ? '0.0.4 text' : 'OpenMetrics 1.0.0'}: the same names, label sets and values`, async () => {
      const fromPackage = await stored(prometheus, `ours-${format}`);
      const fromClient = await stored(prometheus, `python-${format}`);
      assert.ok(fromPackage.size > 100, `${fromPackage.size} series`);
      assert.deepEqual(fromPackage, fromClient);
    });
  }
});
