import assert from 'node:assert/strict';
import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';
import { startClusterPrimary } from '../../cluster-primary';
import type { ClusterPrimary } from '../../exporters/cluster/cluster-primary';
import { httpGet, httpGetBytes } from '../support/http';
import { PROTOBUF_CONTENT_TYPE } from '../../exporters/protobuf-negotiation';
import { decodeMetricFamilies, type DecodedExemplar, type DecodedHistogram } from '../support/prometheus-protobuf';
import { quietHandle } from '../support/quiet-handle';
import { parseSamples } from '../support/exposition';
import { expectPrinted } from '../support/console-capture';
import { tracedRequest, WORKER_OPTIONS, type TestCommand, type TestReply } from './fixtures/metrics-worker';

const E2E = 'vllm:omni_e2e_request_latency_s';

const FIXTURE = join(__dirname, 'fixtures', 'metrics-worker.ts');
const COLLECT_TIMEOUT_MILLIS = 1500;

/** Gauges that are not counts: merged with max, as the primary's default policy does. */
const MAX_GAUGES = new Set(['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'vllm:engine_sleep_state']);

type Values = Map<string, number>;

function sampleKey(name: string, labels: Record<string, string>): string {
  return `${name}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))))}`;
}

/** Every sample of a text with its family type (`histogram` for `_bucket` / `_count` / `_sum`). */
function typedSamples(text: string): Array<{ key: string; family: string; type: string; value: number }> {
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (match) types.set(match[1] as string, match[2] as string);
  }
  return parseSamples(text).map((sample) => {
    let family = sample.name;
    if (!types.has(family)) family = family.replace(/_(bucket|count|sum)$/, '');
    const type = types.get(family);
    assert.ok(type !== undefined, `TYPE of ${sample.name}`);
    return { key: sampleKey(sample.name, sample.labels), family, type, value: sample.value };
  });
}

/**
 * What the primary must serve, computed from the workers' own texts: counters and histograms
 * summed over every worker that ever ran (`cumulative`), gauges over `live` workers only (summed,
 * max for non-count gauges, info families deduplicated).
 */
function expectedMerge(cumulative: readonly string[], live: readonly string[]): Values {
  const expected: Values = new Map();
  for (const text of cumulative) {
    for (const sample of typedSamples(text)) {
      // A series' creation is the earliest among the workers that ever had it.
      if (sample.family.endsWith('_created')) expected.set(sample.key, Math.min(expected.get(sample.key) ?? Infinity, sample.value));
      if (sample.type !== 'counter' && sample.type !== 'histogram') continue;
      expected.set(sample.key, (expected.get(sample.key) ?? 0) + sample.value);
    }
  }
  for (const text of live) {
    for (const sample of typedSamples(text)) {
      if (sample.type !== 'gauge' || sample.family.endsWith('_created')) continue;
      const current = expected.get(sample.key);
      const max = sample.family.endsWith('_info') || MAX_GAUGES.has(sample.family);
      expected.set(sample.key, current === undefined ? sample.value : max ? Math.max(current, sample.value) : current + sample.value);
    }
  }
  return expected;
}

function valuesOf(text: string): Values {
  const values: Values = new Map();
  for (const sample of typedSamples(text)) {
    assert.ok(!values.has(sample.key), `${sample.key} printed once`);
    values.set(sample.key, sample.value);
  }
  return values;
}

function assertMerged(actual: Values, expected: Values, step: string): void {
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${step}: the same series`);
  for (const [key, value] of expected) assert.equal(actual.get(key), value, `${step}: ${key}`);
}

/** Counters and histogram samples of `later` are never below those of `earlier`. */
function assertNeverBackwards(earlier: string, later: string): void {
  const after = valuesOf(later);
  for (const sample of typedSamples(earlier)) {
    if (sample.type !== 'counter' && sample.type !== 'histogram') continue;
    assert.ok((after.get(sample.key) ?? -1) >= sample.value, `${sample.key} did not go backwards`);
  }
}

function nextReply<T extends TestReply['test']>(worker: Worker, test: T): Promise<Extract<TestReply, { test: T }>> {
  return new Promise((resolve) => {
    const listener = (message: TestReply): void => {
      if (message?.test !== test) return;
      worker.off('message', listener);
      resolve(message as Extract<TestReply, { test: T }>);
    };
    worker.on('message', listener);
  });
}

function command(worker: Worker, message: TestCommand): void {
  worker.send(message);
}

function exited(worker: Worker): Promise<void> {
  return worker.isDead() ? Promise.resolve() : new Promise((resolve) => worker.once('exit', () => resolve()));
}

describe('cluster scale-out: the primary serves the sum of its workers', function () {
  this.timeout(30_000);
  const workers: Worker[] = [];
  let primary: ClusterPrimary | undefined;

  before(() => {
    cluster.setupPrimary({ exec: FIXTURE, execArgv: ['--require', require.resolve('tsx/cjs')], args: [] });
  });

  after(async () => {
    for (const worker of workers) {
      if (!worker.isDead()) worker.process.kill('SIGKILL');
    }
    await Promise.all(workers.map(exited));
    await primary?.stop();
  });

  async function fork(k: number): Promise<{ worker: Worker; text: string }> {
    const worker = cluster.fork();
    workers.push(worker);
    await nextReply(worker, 'ready');
    const done = nextReply(worker, 'done');
    command(worker, { test: 'work', k });
    return { worker, text: (await done).text };
  }

  async function scrape(): Promise<string> {
    const response = await httpGet((primary?.server?.url as string).replace('localhost', '127.0.0.1'));
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    return response.body;
  }

  it('sums counters and histograms exactly, keeps exited workers\u2019 counts, drops their gauges', async () => {
    primary = await startClusterPrimary({
      workerOptions: WORKER_OPTIONS,
      prometheus: { host: '127.0.0.1', port: 0 },
      collectTimeoutMillis: COLLECT_TIMEOUT_MILLIS,
    });

    // 1. Three workers, each with its own fixed workload.
    const [w0, w1, w2] = await Promise.all([fork(0), fork(1), fork(2)]);
    const first = await scrape();
    assertMerged(valuesOf(first), expectedMerge([w0.text, w1.text, w2.text], [w0.text, w1.text, w2.text]), 'three workers');
    const firstValues = valuesOf(first);
    // Spelled out: 3 + 4 + 5 successes; running requests 1 + 2 + 3; the info family once per label set.
    assert.equal(firstValues.get(sampleKey('vllm:omni_requests_success_total', { finished_reason: 'stop', model_name: 'm' })), 2 + 2 + 3);
    assert.equal(firstValues.get(sampleKey('vllm:omni_e2e_request_latency_s_count', { model_name: 'm' })), 12);
    assert.equal(firstValues.get(sampleKey('vllm:omni_num_requests_running', { model_name: 'm' })), 6);
    const info = parseSamples(first).filter((sample) => sample.name === 'vllm:cache_config_info');
    assert.deepEqual(
      info.map((sample) => [sample.labels.stage, sample.labels.replica, sample.value]),
      [
        ['0', '0', 1],
        ['1', '0', 1],
        ['1', '1', 1],
      ],
    );
    assert.equal((first.match(/^# HELP vllm:cache_config_info /gm) ?? []).length, 1, 'one HELP per family');

    // 2. SIGKILL a worker that has synced (the scrape above collected its latest snapshot).
    w1.worker.process.kill('SIGKILL');
    await exited(w1.worker);
    const second = await scrape();
    assertMerged(valuesOf(second), expectedMerge([w0.text, w1.text, w2.text], [w0.text, w2.text]), 'after the kill');
    assert.equal(valuesOf(second).get(sampleKey('vllm:omni_num_requests_running', { model_name: 'm' })), 1 + 3, 'its gauges are gone');
    assert.equal(
      valuesOf(second).get(sampleKey('vllm:num_requests_running', { model_name: 'm', stage: '1', replica: '0' })),
      0,
      'only the killed worker ran requests on engine 1; the live workers\u2019 series are at zero since registration',
    );
    assertNeverBackwards(first, second);

    // 3. A replacement worker contributes under its new id.
    const w3 = await fork(3);
    const third = await scrape();
    assertMerged(valuesOf(third), expectedMerge([w0.text, w1.text, w2.text, w3.text], [w0.text, w2.text, w3.text]), 'with the replacement');
    const stop = sampleKey('vllm:omni_requests_success_total', { finished_reason: 'stop', model_name: 'm' });
    assert.equal(valuesOf(third).get(stop), (valuesOf(second).get(stop) ?? 0) + (valuesOf(w3.text).get(stop) ?? 0), 'old totals + the new worker');
    assertNeverBackwards(second, third);

    // 4. A graceful exit loses nothing: work recorded after the last scrape arrives through flush().
    const moreDone = nextReply(w3.worker, 'done');
    command(w3.worker, { test: 'work', k: 4 });
    const w3Final = (await moreDone).text;
    const flushed = nextReply(w3.worker, 'flushed');
    command(w3.worker, { test: 'flush-and-exit' });
    assert.equal((await flushed).stored, true, 'the primary acknowledged the flush');
    await exited(w3.worker);
    const fourth = await scrape();
    assertMerged(valuesOf(fourth), expectedMerge([w0.text, w1.text, w2.text, w3Final], [w0.text, w2.text]), 'after a graceful exit');
    assertNeverBackwards(third, fourth);

    // 5. A worker that stops answering contributes its last snapshot; the scrape waits at most the timeout.
    const muted = nextReply(w0.worker, 'muted');
    command(w0.worker, { test: 'mute' });
    await muted;
    const lateDone = nextReply(w0.worker, 'done');
    command(w0.worker, { test: 'work', k: 5 });
    await lateDone;
    const started = Date.now();
    const fifth = await scrape();
    const elapsed = Date.now() - started;
    // The scrape ends (a primary that waited on the muted worker for good would fail the test by its own timeout), after the timeout.
    assert.ok(elapsed >= COLLECT_TIMEOUT_MILLIS - 50, `scrape took ${elapsed} ms`);
    assertMerged(valuesOf(fifth), valuesOf(fourth), 'a hung worker');
  });
});

describe('cluster scale-out: native buckets and exemplars reach the primary', function () {
  this.timeout(30_000);
  const workers: Worker[] = [];
  let primary: ClusterPrimary | undefined;

  before(() => {
    cluster.setupPrimary({ exec: FIXTURE, execArgv: ['--require', require.resolve('tsx/cjs')], args: [] });
  });

  after(async () => {
    for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    await Promise.all(workers.map(exited));
    await primary?.stop();
  });

  it('the protobuf scrape of the primary: the sum of the workers as one native histogram, every exemplar with its trace; OpenMetrics: the same exemplars', async () => {
    primary = await startClusterPrimary({
      workerOptions: WORKER_OPTIONS,
      prometheus: { host: '127.0.0.1', port: 0 },
      collectTimeoutMillis: COLLECT_TIMEOUT_MILLIS,
    });
    for (const k of [0, 1]) {
      const worker = cluster.fork({ OMNI_TEST_NATIVE: '1' });
      workers.push(worker);
      await nextReply(worker, 'ready');
      const done = nextReply(worker, 'done');
      command(worker, { test: 'work', k });
      await done;
    }
    const url = (primary.server?.url as string).replace('localhost', '127.0.0.1');
    const response = await httpGetBytes(url, { Accept: 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited' });
    assert.equal(response.headers['content-type'], PROTOBUF_CONTENT_TYPE);
    const served = decodeMetricFamilies(response.body).find((family) => family.name === E2E)?.metric[0]?.histogram;

    // The same requests observed by one process: what the sum of the workers' native buckets must be.
    const single = await quietHandle({ logStats: true, nativeHistograms: { families: [E2E] }, exemplars: true });
    try {
      for (const k of [0, 1]) for (let i = 0; i < 3 + k; i++) single.pipeline.requestSucceeded(0.25 * (i + 1 + k), 'stop');
      const expected = decodeMetricFamilies((await single.prometheusReader?.protobufBytes()) ?? Buffer.alloc(0)).find((family) => family.name === E2E)
        ?.metric[0]?.histogram;
      const nativePart = (histogram: DecodedHistogram | undefined) => ({
        count: histogram?.sampleCount,
        sum: histogram?.sampleSum,
        schema: histogram?.schema,
        zeroCount: histogram?.zeroCount,
        spans: histogram?.positiveSpan,
        deltas: histogram?.positiveDelta,
      });
      assert.equal(served?.sampleCount, 7);
      assert.deepEqual(nativePart(served), nativePart(expected));
    } finally {
      await single.shutdown();
    }
    // Each bucket keeps the latest exemplar of any worker; the native histogram carries the same ones.
    const traces = (exemplars: ReadonlyArray<DecodedExemplar | undefined>): string[] =>
      exemplars.flatMap((exemplar) => exemplar?.label.filter((label) => label.name === 'trace_id').map((label) => label.value) ?? []);
    const bucketTraces = traces(served?.bucket.map((bucket) => bucket.exemplar) ?? []);
    const every = [0, 1].flatMap((k) => Array.from({ length: 3 + k }, (_, i) => tracedRequest(k, i).traceId));
    assert.ok(bucketTraces.length >= 3, bucketTraces.join());
    assert.ok(bucketTraces.every((id) => every.includes(id)));
    assert.deepEqual(traces(served?.exemplars ?? []), bucketTraces);
    const openMetrics = await httpGet(url, { Accept: 'application/openmetrics-text;version=1.0.0' });
    const omTraces = openMetrics.body
      .split('\n')
      .filter((line) => line.startsWith(`${E2E}_bucket`))
      .flatMap((line) => /trace_id="([0-9a-f]{32})"/.exec(line)?.slice(1) ?? []);
    assert.deepEqual(omTraces, bucketTraces);
  });
});

describe('cluster scale-out: a worker gone wrong cannot take the primary down', function () {
  this.timeout(30_000);
  const workers: Worker[] = [];
  let primary: ClusterPrimary | undefined;

  before(() => {
    cluster.setupPrimary({ exec: FIXTURE, execArgv: ['--require', require.resolve('tsx/cjs')], args: [] });
  });

  after(async () => {
    for (const worker of workers) {
      if (!worker.isDead()) worker.process.kill('SIGKILL');
    }
    await Promise.all(workers.map(exited));
    await primary?.stop();
  });

  async function fork(k: number): Promise<{ worker: Worker; text: string }> {
    const worker = cluster.fork();
    workers.push(worker);
    await nextReply(worker, 'ready');
    const done = nextReply(worker, 'done');
    command(worker, { test: 'work', k });
    return { worker, text: (await done).text };
  }

  async function scrape(): Promise<string> {
    const response = await httpGet((primary?.server?.url as string).replace('localhost', '127.0.0.1'));
    assert.equal(response.status, 200, response.body);
    return response.body;
  }

  it('a malformed snapshot and other bucket bounds: the rest is served, its exit is survived, no count goes backwards', async () => {
    primary = await startClusterPrimary({
      workerOptions: WORKER_OPTIONS,
      prometheus: { host: '127.0.0.1', port: 0 },
      collectTimeoutMillis: COLLECT_TIMEOUT_MILLIS,
    });
    const [w0, w1, hostile] = await Promise.all([fork(0), fork(1), fork(2)]);
    const latency = 'vllm:omni_e2e_request_latency_s';
    // Said once, as the primary takes the snapshot in: what it left out, per family.
    const first = await expectPrinted(
      [
        /^omni-otel-metrics: cluster worker \d+ sent points the primary cannot merge; they are left out, the rest is served: vllm:omni_requests_success_total: 2 point\(s\) dropped \(attributes that are not a map of strings, numbers or booleans\); vllm:e2e_request_latency_seconds: 1 point\(s\) dropped \(a histogram value that is not an object\); vllm:omni_e2e_request_latency_s: 1 point\(s\) dropped \(bucket bounds other than the primary's /,
      ],
      async () => {
        // A far-ahead `seq`: the hostile worker's own later snapshots are older, so this one stays its live snapshot.
        const sent = nextReply(hostile.worker, 'sent');
        command(hostile.worker, {
          test: 'send-raw',
          message: {
            omniOtelMetrics: 1,
            type: 'snapshot',
            seq: 1e9,
            snapshot: {
              metrics: [
                {
                  name: 'vllm:omni_requests_success_total',
                  kind: 'counter',
                  description: 'x',
                  unit: '',
                  points: [{ attributes: null, value: 1 }, null, { attributes: { finished_reason: 'stop', model_name: 'm' }, value: 7, startTime: 1 }],
                },
                {
                  name: 'vllm:e2e_request_latency_seconds',
                  kind: 'histogram',
                  description: 'x',
                  unit: '',
                  points: [{ attributes: { model_name: 'm' }, value: 42 }],
                },
                {
                  name: latency,
                  kind: 'histogram',
                  description: 'x',
                  unit: '',
                  points: [{ attributes: { model_name: 'm' }, value: { boundaries: [1, 5], counts: [500, 0, 0], sum: 50, count: 500 } }],
                },
              ],
            },
          },
        });
        await sent;
        return scrape();
      },
    );
    const healthy = expectedMerge([w0.text, w1.text], [w0.text, w1.text]);
    const stop = sampleKey('vllm:omni_requests_success_total', { finished_reason: 'stop', model_name: 'm' });
    const latencyCount = sampleKey(`${latency}_count`, { model_name: 'm' });
    assert.equal(valuesOf(first).get(stop), (healthy.get(stop) ?? 0) + 7, 'the healthy workers\u2019 successes and the hostile worker\u2019s one good point');
    assert.equal(valuesOf(first).get(latencyCount), 3 + 4, 'the healthy workers\u2019 latency count; the other bounds are left out');
    assert.equal(valuesOf(first).get(latencyCount), healthy.get(latencyCount));

    hostile.worker.process.kill('SIGKILL');
    await exited(hostile.worker);
    const second = await scrape();
    assert.equal(valuesOf(second).get(stop), valuesOf(first).get(stop), 'its good point is kept after it exits');
    assert.equal(valuesOf(second).get(latencyCount), 3 + 4, 'the live workers\u2019 histogram stays');
    assertNeverBackwards(first, second);
  });
});
