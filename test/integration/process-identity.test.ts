import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { serviceInstanceId } from '../../exporters/otlp/otel-resource';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { needPeer } from '../support/peers/need-peer';

const FIXTURE = join(__dirname, 'fixtures', 'scrape-target.ts');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The fixture in a child process; resolves with it and the port it serves on. */
function startChild(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', FIXTURE], { cwd: join(__dirname, '..', '..'), stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the fixture did not start: ${output}`)), 15_000);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /ready (\d+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve({ child, port: Number(ready[1]) });
      }
    });
    child.on('exit', (code) => reject(new Error(`the fixture exited with ${code}: ${output}`)));
  });
}

/** Two processes (this one and a child), each one registration, scraped by one real Prometheus as two targets of one job. */
describe('two processes stay two series sets in a real Prometheus, told apart by their resource', function () {
  needPeer('debian-prometheus', this);
  this.timeout(60_000);
  let handle: OmniMetricsHandle | undefined;
  let child: ChildProcess | undefined;
  let prometheus: PrometheusHandle | undefined;

  before(async () => {
    handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: { host: '127.0.0.1', port: 0, withTargetInfo: true }, selfCheck: false });
    handle.stageReplica.observe([{ stage: 0, replica: 0, outputsQueueSize: 5, inflight: 1 }]);
    const started = await startChild();
    child = started.child;
    prometheus = await startPrometheus({
      scrapeTargets: [
        { job: 'omni', target: `127.0.0.1:${handle.prometheusServer!.port}` },
        { job: 'omni', target: `127.0.0.1:${started.port}` },
      ],
      scrapeIntervalSeconds: 1,
    });
  });

  after(async () => {
    await prometheus?.stop();
    child?.stdin?.end();
    if (child && child.exitCode === null) await new Promise((resolve) => child!.once('exit', resolve));
    await handle?.shutdown();
  });

  it('target_info carries one service.instance.id (a UUID) per process, the host name and the pid', async () => {
    const infos = await prometheus!.waitFor('target_info{job="omni"}', (result) => result.length === 2, 30_000);
    const ids = infos.map((info) => info.metric.service_instance_id ?? '');
    assert.equal(new Set(ids).size, 2, JSON.stringify(infos));
    for (const id of ids) assert.match(id, UUID);
    assert.ok(ids.includes(serviceInstanceId()), 'this process reports its own id');
    assert.deepEqual(
      infos.map((info) => info.metric.host_name),
      [hostname(), hostname()],
    );
    assert.deepEqual(new Set(infos.map((info) => info.metric.process_pid)), new Set([String(process.pid), String(child!.pid)]));
  });

  it("the same family from both processes is two series, joined to each process's instance id", async () => {
    const joined = await prometheus!.waitFor(
      'vllm:omni_stage_outputs_queue_size * on (job, instance) group_left (service_instance_id) target_info',
      (result) => result.length === 2,
      30_000,
    );
    const byId = Object.fromEntries(joined.map((sample) => [sample.metric.service_instance_id, sample.value[1]]));
    assert.equal(byId[serviceInstanceId()], '5');
    assert.equal(Object.values(byId).sort().join(','), '2,5');
  });
});
