import assert from 'node:assert/strict';
import { startClusterPrimary } from '../../cluster-primary';
import { mergeSnapshots, retireSnapshot, type GaugeMergePolicy } from '../../exporters/cluster/merge';
import { isProtocolMessage } from '../../exporters/cluster/protocol';
import { EMPTY_SNAPSHOT, type ClusterSnapshot, type SnapshotMetric } from '../../exporters/snapshot';
import { familiesSnapshot } from '../../exporters/exposition/snapshot-families';
import { writeText } from '../../exporters/exposition/text-writer';
import { aggregateFamilies, gaugeMergePolicy } from '../../exporters/cluster/cluster-primary';
import type { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics } from '../../register';
import { OPTION_KEYS } from '../../settings';
import { OmniOptionError } from '../../views/common/option-checks';
import { declaredFamilies } from '../../views/declared-families';
import { resolveCatalog } from '../../views/catalog/catalog';
import { PROMETHEUS_CLIENT_DEFAULT_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { expectPrinted } from '../support/console-capture';
import { declaredFamilyNames, parseSamples } from '../support/exposition';

const SUM_ALL: GaugeMergePolicy = () => 'sum';

function counter(name: string, points: Array<[Record<string, string>, number]>): SnapshotMetric {
  return { name, kind: 'counter', description: `${name} help`, unit: '', points: points.map(([attributes, value]) => ({ attributes, value })) };
}

function gauge(name: string, points: Array<[Record<string, string>, number | null]>): SnapshotMetric {
  return { name, kind: 'gauge', description: `${name} help`, unit: '', points: points.map(([attributes, value]) => ({ attributes, value })) };
}

function histogram(name: string, boundaries: number[], counts: number[], sum: number): SnapshotMetric {
  return {
    name,
    kind: 'histogram',
    description: `${name} help`,
    unit: 's',
    points: [{ attributes: { model_name: 'm' }, value: { boundaries, counts, sum, count: counts.reduce((a, b) => a + b, 0) } }],
  };
}

function valueOf(snapshot: ClusterSnapshot, name: string, attributes: Record<string, string> = {}): unknown {
  const metric = snapshot.metrics.find((m) => m.name === name);
  return metric?.points.find((p) => JSON.stringify(Object.entries(p.attributes).sort()) === JSON.stringify(Object.entries(attributes).sort()))?.value;
}

/** Through the IPC channel's JSON serialization and back. */
function overIpc<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const WORKER_OPTIONS: OmniMetricsOptions = {
  modelName: 'm',
  stagePools: [1, 2],
  logStats: true,
  prometheus: false,
  logIntervalSeconds: 0,
  cacheConfig: { block_size: 16 },
  // Each process's own memory and CPU: not what the merge tests compare.
  processMetrics: false,
  selfCheck: false,
};

describe('cluster snapshots and their merge', () => {
  it('sums counters per label set, whatever the attribute order', () => {
    const a: ClusterSnapshot = {
      metrics: [
        counter('c_total', [
          [{ x: '1', y: '2' }, 3],
          [{ x: '2', y: '2' }, 1],
        ]),
      ],
    };
    const b: ClusterSnapshot = { metrics: [counter('c_total', [[{ y: '2', x: '1' }, 4]])] };
    const merged = mergeSnapshots(EMPTY_SNAPSHOT, [a, b], SUM_ALL);
    assert.equal(valueOf(merged, 'c_total', { x: '1', y: '2' }), 7);
    assert.equal(valueOf(merged, 'c_total', { x: '2', y: '2' }), 1);
  });

  it('sums histogram buckets, counts and sums; drops a worker with other bounds, with a warning', async () => {
    const merged = await expectPrinted(["omni-otel-metrics: h: workers use different bucket bounds; the mismatching worker's series is dropped"], () =>
      mergeSnapshots(
        EMPTY_SNAPSHOT,
        [
          { metrics: [histogram('h', [1, 2], [1, 0, 2], 6.5)] },
          { metrics: [histogram('h', [1, 2], [0, 3, 1], 8)] },
          { metrics: [histogram('h', [1, 5], [9, 9, 9], 99)] },
        ],
        SUM_ALL,
      ),
    );
    assert.deepEqual(valueOf(merged, 'h', { model_name: 'm' }), { boundaries: [1, 2], counts: [1, 3, 3], sum: 14.5, count: 7 });
  });

  it('merges gauges over live workers by policy; retired totals keep counters and histograms only', () => {
    const exited: ClusterSnapshot = {
      metrics: [counter('c_total', [[{}, 5]]), gauge('running', [[{}, 2]]), histogram('h', [1], [1, 1], 3)],
    };
    const retired = retireSnapshot(EMPTY_SNAPSHOT, exited);
    assert.deepEqual(
      retired.metrics.map((m) => m.name),
      ['c_total', 'h'],
    );
    const live: ClusterSnapshot[] = [
      { metrics: [counter('c_total', [[{}, 1]]), gauge('running', [[{}, 3]]), gauge('usage', [[{}, 0.25]]), gauge('x_info', [[{ a: '1' }, 1]])] },
      { metrics: [counter('c_total', [[{}, 2]]), gauge('running', [[{}, 4]]), gauge('usage', [[{}, 0.5]]), gauge('x_info', [[{ a: '1' }, 1]])] },
    ];
    const policy: GaugeMergePolicy = ({ name }) => (name === 'running' ? 'sum' : 'max');
    const merged = mergeSnapshots(retired, live, policy);
    assert.equal(valueOf(merged, 'c_total'), 8);
    assert.equal(valueOf(merged, 'running'), 7, 'the exited worker\u2019s 2 running requests are gone');
    assert.equal(valueOf(merged, 'usage'), 0.5);
    assert.equal(valueOf(merged, 'x_info', { a: '1' }), 1, 'one info series');
    assert.deepEqual(valueOf(merged, 'h', { model_name: 'm' }), { boundaries: [1], counts: [1, 1], sum: 3, count: 2 });
    // Stateless: merging the same snapshots again gives the same totals (nothing accumulates).
    assert.deepEqual(mergeSnapshots(retired, live, policy), merged);
  });

  it('drops a stream whose kind differs between workers, with a warning', async () => {
    const merged = await expectPrinted(['omni-otel-metrics: a is a gauge in one worker and a counter in another; the gauge is dropped'], () =>
      mergeSnapshots(EMPTY_SNAPSHOT, [{ metrics: [counter('a', [[{}, 1]])] }, { metrics: [gauge('a', [[{}, 5]])] }], SUM_ALL),
    );
    assert.equal(valueOf(merged, 'a'), 1);
  });

  it('one worker\u2019s snapshot, sent over IPC and serialized, is exactly its own /metrics', async () => {
    const handle = await registerOmniMetrics(WORKER_OPTIONS);
    handle.pipeline.requestSucceeded(0.3, 'stop');
    handle.pipeline.setRunning(2);
    handle.transfer.observeSize(0, 0, 1, 1, 5000);
    const own = await handle.metricsText();
    const ownOpenMetrics = await handle.metricsText('openmetrics');
    const families = await (handle.prometheusReader as OmniPrometheusReader).expositionFamilies();
    await handle.shutdown();

    const snapshot = overIpc(familiesSnapshot(families));
    const message = { omniOtelMetrics: 1, type: 'snapshot', seq: 1, snapshot };
    assert.ok(isProtocolMessage(overIpc(message)));
    const merged = mergeSnapshots(EMPTY_SNAPSHOT, [snapshot], SUM_ALL);
    const declared = declaredFamilies(handle.catalog, 'm');
    // `_created` included: each series' creation time crosses the IPC channel with it.
    assert.equal(writeText(aggregateFamilies(merged, declared), { format: 'text', createdSeries: true }), own);
    assert.equal(writeText(aggregateFamilies(merged, declared), { format: 'openmetrics', createdSeries: true }), ownOpenMetrics);
  });

  it('tenant-labelled workers behind a primary whose catalog names no request labels: no zero {model_name} series beside the tenant ones', async () => {
    const handle = await registerOmniMetrics({
      ...WORKER_OPTIONS,
      requestLabels: [{ name: 'tenant', from: (request) => request.tenant, maxValues: 2 }],
    });
    try {
      const labelled = handle.requestLabelled;
      assert.ok(labelled);
      labelled.requestSucceeded(['alpha'], 0.5, 'stop');
      labelled.requestFailed(['bravo'], 'error');
      labelled.observeTokens(['alpha'], 16, 4);
      labelled.observeQueueWait(['alpha'], 0.25);
      const own = await handle.metricsText();
      const snapshot = overIpc(familiesSnapshot(await (handle.prometheusReader as OmniPrometheusReader).expositionFamilies()));
      const merged = mergeSnapshots(EMPTY_SNAPSHOT, [snapshot], SUM_ALL);
      // The primary of the documented example: `catalog: { logStats: true }`, no `requestLabels`.
      const declared = declaredFamilies(resolveCatalog({ logStats: true }), 'm');
      const served = writeText(aggregateFamilies(merged, declared), { format: 'text', createdSeries: true });
      const modelOnly = parseSamples(served).filter(
        (sample) => /^vllm:omni_(e2e_request_latency_s|request_queue_wait_s|prompt_tokens|generation_tokens)/.test(sample.name) && !('tenant' in sample.labels),
      );
      assert.deepEqual(modelOnly, []);
      assert.equal(served, own);
    } finally {
      await handle.shutdown();
    }
  });

  it('a worker that scales a stage: the aggregate gains the new replica and drops the removed one, other workers untouched', async () => {
    const scaling = await registerOmniMetrics(WORKER_OPTIONS);
    const steady = await registerOmniMetrics(WORKER_OPTIONS);
    const snapshotOf = async (handle: typeof scaling): Promise<ClusterSnapshot> =>
      overIpc(familiesSnapshot(await (handle.prometheusReader as OmniPrometheusReader).expositionFamilies()));
    const replicasIn = (snapshot: ClusterSnapshot): string[] =>
      [...new Set(snapshot.metrics.flatMap((metric) => metric.points.map((point) => `${String(point.attributes.stage)}/${String(point.attributes.replica)}`)))]
        // Model-level series, and per-stage ones such as stage_waiting_requests, name no replica.
        .filter((key) => !key.endsWith('/undefined'))
        .sort();
    try {
      scaling.stageReplica.observe([{ stage: 1, replica: 1, inflight: 2, outputsQueueSize: 0 }]);
      steady.stageReplica.observe([{ stage: 1, replica: 1, inflight: 3, outputsQueueSize: 0 }]);
      let merged = mergeSnapshots(EMPTY_SNAPSHOT, [await snapshotOf(scaling), await snapshotOf(steady)], SUM_ALL);
      assert.deepEqual(replicasIn(merged), ['0/0', '1/0', '1/1']);
      assert.equal(valueOf(merged, 'vllm:omni_stage_inflight_requests', { model_name: 'm', stage: '1', replica: '1' }), 5);

      scaling.addReplica(1);
      scaling.removeReplica(1, 1);
      merged = mergeSnapshots(EMPTY_SNAPSHOT, [await snapshotOf(scaling), await snapshotOf(steady)], SUM_ALL);
      assert.deepEqual(replicasIn(merged), ['0/0', '1/0', '1/1', '1/2']);
      assert.equal(
        valueOf(merged, 'vllm:omni_stage_inflight_requests', { model_name: 'm', stage: '1', replica: '1' }),
        3,
        'only the steady worker has replica 1 now',
      );
      assert.equal(valueOf(merged, 'vllm:num_requests_running', { model_name: 'm', stage: '1', replica: '2' }), 0);

      const onlyScaling = mergeSnapshots(EMPTY_SNAPSHOT, [await snapshotOf(scaling)], SUM_ALL);
      assert.deepEqual(replicasIn(onlyScaling), ['0/0', '1/0', '1/2']);
    } finally {
      await scaling.shutdown();
      await steady.shutdown();
    }
  });

  it('JSON nulls (NaN, infinities) come back as NaN', () => {
    const snapshot = overIpc({ metrics: [gauge('g', [[{}, NaN]])] });
    const merged = mergeSnapshots(EMPTY_SNAPSHOT, [snapshot], SUM_ALL);
    assert.ok(Number.isNaN(valueOf(merged, 'g') as number));
    assert.match(writeText(aggregateFamilies(merged, []), { format: 'text', createdSeries: false }), /^g NaN$/m);
  });

  it('ignores messages of other protocols on the channel', () => {
    for (const message of [
      null,
      'hi',
      { test: 'work' },
      { omniOtelMetrics: 2, type: 'collect', requestId: 1 },
      { omniOtelMetrics: 1, type: 'snapshot', seq: 1 },
    ]) {
      assert.equal(isProtocolMessage(message), false, JSON.stringify(message));
    }
  });
});

describe('the primary\u2019s gauge merge', () => {
  it('by family: counts summed, ratios and states the max, a process\u2019s memory summed, its start time the earliest; an override wins', () => {
    const policy = gaugeMergePolicy(resolveCatalog({ logStats: true, processMetrics: true }), { 'vllm:engine_sleep_state': 'min' });
    const merges = Object.fromEntries(
      [
        'vllm:num_requests_running',
        'vllm:kv_cache_usage_perc',
        'vllm:engine_sleep_state',
        'vllm:cache_config_info',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'process_start_time_seconds',
        'process_open_fds',
        'process_max_fds',
        'nodejs_eventloop_lag_seconds',
        'app_queue_depth',
      ].map((name) => [name, policy({ name, unit: '', kind: 'gauge' })]),
    );
    assert.deepEqual(merges, {
      'vllm:num_requests_running': 'sum',
      'vllm:kv_cache_usage_perc': 'max',
      'vllm:engine_sleep_state': 'min',
      'vllm:cache_config_info': 'max',
      process_resident_memory_bytes: 'sum',
      nodejs_heap_size_used_bytes: 'sum',
      process_start_time_seconds: 'min',
      process_open_fds: 'sum',
      process_max_fds: 'max',
      nodejs_eventloop_lag_seconds: 'max',
      app_queue_depth: 'sum',
    });
  });
});

describe('startClusterPrimary', () => {
  it('with no workers yet serves every family\u2019s HELP/TYPE and the eager pipeline zero series', async () => {
    const primary = await startClusterPrimary({ workerOptions: WORKER_OPTIONS, prometheus: false });
    const worker = await registerOmniMetrics({ ...WORKER_OPTIONS, cacheConfig: undefined, prometheus: { createdSeries: false }, exporters: [] });
    try {
      const text = await primary.metricsText();
      const fresh = await worker.metricsText();
      assert.deepEqual(declaredFamilyNames(text), declaredFamilyNames(fresh), 'the same families, in the same order');
      // The engine series of a fresh worker depend on its pools, which only the workers know.
      const modelOnly = parseSamples(fresh).filter((sample) => Object.keys(sample.labels).every((name) => name === 'model_name' || name === 'le'));
      assert.deepEqual(parseSamples(text), modelOnly);
      const histogramSeries = (buckets: readonly number[]): number => buckets.length + 1 + 2;
      const eagerHistograms =
        histogramSeries(SECONDS_BUCKETS) * 2 + histogramSeries(PROMETHEUS_CLIENT_DEFAULT_BUCKETS) * 2 + histogramSeries(SECONDS_FAST_BUCKETS) * 2;
      assert.equal(
        modelOnly.length,
        2 + eagerHistograms + 1 + 2 + 1,
        'running, waiting, image count, prompt and generation tokens, realtime VAD sessions, and the e2e, queue wait, inference steps, image pixels and realtime VAD latency histograms at zero',
      );
    } finally {
      await worker.shutdown();
      await primary.stop();
    }
  });

  it('given the workers\u2019 options, announces what they register: goodput, request labels, stage names, process families', async () => {
    const workerOptions: OmniMetricsOptions = {
      ...WORKER_OPTIONS,
      cacheConfig: undefined,
      processMetrics: true,
      stageNames: ['thinker', 'talker'],
      requestLabels: [{ name: 'tenant', header: 'x-tenant-id', values: ['alpha'] }],
      slo: { e2eSeconds: 2 },
      exporters: [],
    };
    // No `_created` lines: the primary's zero series have no creation time until a worker reports.
    const worker = await registerOmniMetrics({ ...workerOptions, prometheus: { createdSeries: false } });
    const primary = await startClusterPrimary({ workerOptions, prometheus: false });
    try {
      const announced = declaredFamilyNames(await primary.metricsText());
      assert.deepEqual(announced, declaredFamilyNames(await worker.metricsText()));
      for (const name of ['vllm:omni_requests_good_total', 'vllm:omni_slo_misses_total', 'vllm:omni_stage_info', 'process_resident_memory_bytes']) {
        assert.ok(announced.includes(name), name);
      }
      assert.equal(announced[0], 'nodejs_eventloop_lag_seconds', 'the process families first, as a worker prints them');
    } finally {
      await worker.shutdown();
      await primary.stop();
    }
  });

  it('workers with the otel naming scheme: the primary announces the families the workers print (they send their exposed names)', async () => {
    const worker = await registerOmniMetrics({ ...WORKER_OPTIONS, cacheConfig: undefined, naming: 'otel' });
    const primary = await startClusterPrimary({ workerOptions: WORKER_OPTIONS, prometheus: false });
    try {
      assert.deepEqual(declaredFamilyNames(await primary.metricsText('openmetrics')), declaredFamilyNames(await worker.metricsText('openmetrics')));
    } finally {
      await worker.shutdown();
      await primary.stop();
    }
  });

  it('refuses bad options before listening, each as an OmniOptionError naming it', async () => {
    const refused = (option: string, message: string) => (error: unknown) => {
      assert.ok(error instanceof OmniOptionError, String(error));
      assert.equal(error.option, option);
      assert.equal(error.message, `omni-otel-metrics: ${message}`);
      return true;
    };
    await assert.rejects(
      startClusterPrimary({ workerOptions: { modelName: '' } }),
      refused('workerOptions.modelName', `workerOptions: modelName must be a non-empty string (vLLM's served model name); got the string ""`),
    );
    await assert.rejects(
      startClusterPrimary(undefined as never),
      refused('startClusterPrimary options', 'startClusterPrimary options must be an object; got undefined'),
    );
    await assert.rejects(startClusterPrimary({} as never), refused('workerOptions', 'workerOptions: options must be an object; got undefined'));
    await assert.rejects(
      startClusterPrimary({ workerOptions: { ...WORKER_OPTIONS, logStat: true } as never }),
      refused('workerOptions.logStat', `workerOptions: unknown option "logStat" (did you mean "logStats"?); options accepts ${OPTION_KEYS.join(', ')}`),
    );
    await assert.rejects(
      startClusterPrimary({ workerOptions: WORKER_OPTIONS, collectTimeoutMillis: 0 }),
      refused('collectTimeoutMillis', 'collectTimeoutMillis must be a finite number > 0; got 0'),
    );
    await assert.rejects(
      startClusterPrimary({ workerOptions: WORKER_OPTIONS, gaugeMerge: { 'vllm:x': 'avg' as 'max' } }),
      refused('gaugeMerge["vllm:x"]', 'gaugeMerge["vllm:x"] must be one of "sum", "max", "min"; got the string "avg"'),
    );
    await assert.rejects(
      startClusterPrimary({ workerOptions: WORKER_OPTIONS, gaugeMerge: 'max' as never }),
      refused('gaugeMerge', 'gaugeMerge must be an object of family name → sum | max | min; got the string "max"'),
    );
    await assert.rejects(
      startClusterPrimary({ workerOptions: WORKER_OPTIONS, prometheus: { port: -1 } }),
      refused('prometheus', 'prometheus.port must be an integer from 0 to 65535; got -1'),
    );
  });
});
