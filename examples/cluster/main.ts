/**
 * Scale-out on one host with `node:cluster`: every worker records its own requests, the primary's
 * `/metrics` serves the sum. Run: `npx tsx examples/cluster/main.ts [workers] [port]`, then
 * `curl localhost:9464/metrics`. Ctrl-C stops it; workers flush before they exit.
 *
 * Many hosts: run this per host and let Prometheus scrape each host (or have each process push
 * OTLP to a Collector) and aggregate there.
 */
import cluster from 'node:cluster';
import { registerOmniMetrics, serveClusterWorker, startClusterPrimary, type OmniMetricsOptions } from 'omni-otel-metrics';

/** What every worker registers with; the primary is given the same, so it announces the same families. */
const WORKER_OPTIONS: OmniMetricsOptions = { modelName: 'demo-model', stagePools: [1, 2], logStats: true, prometheus: false, logIntervalSeconds: 0 };

async function primary(workers: number, port: number): Promise<void> {
  const aggregate = await startClusterPrimary({ workerOptions: WORKER_OPTIONS, prometheus: { host: '127.0.0.1', port } });
  console.info(`primary ${process.pid}: aggregate of ${workers} workers at ${aggregate.server?.url}`);
  let stopping = false;
  for (let i = 0; i < workers; i++) cluster.fork();
  // A crashed worker is replaced; its counts stay in the aggregate.
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      console.info(`worker ${worker.id} exited (${signal ?? code}); forking a replacement`);
      cluster.fork();
    }
  });
  process.once('SIGINT', () => {
    stopping = true;
    const running = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
    // Keep the aggregate up until every worker has flushed and exited, then print the final totals.
    void Promise.all(running.map((worker) => new Promise((resolve) => worker.once('exit', resolve)))).then(async () => {
      const totals = (await aggregate.metricsText()).split('\n').filter((line) => line.startsWith('vllm:omni_requests_success_total'));
      console.info(`all workers exited; final totals:\n${totals.join('\n')}`);
      await aggregate.stop();
    });
    for (const worker of running) worker.send({ demo: 'shutdown' });
  });
}

async function worker(): Promise<void> {
  const handle = await registerOmniMetrics(WORKER_OPTIONS);
  const sync = serveClusterWorker(handle, { syncIntervalMillis: 5000 });
  // Stand-in for real traffic: a request finishes every 200-700 ms.
  const timer = setInterval(
    () => {
      handle.pipeline.setRunning(Math.floor(Math.random() * 4));
      handle.pipeline.requestSucceeded(0.2 + Math.random() * 2, Math.random() < 0.9 ? 'stop' : 'length');
      handle.pipeline.observeTokens(32 + Math.floor(Math.random() * 200), 16 + Math.floor(Math.random() * 300));
    },
    200 + Math.floor(Math.random() * 500),
  );
  const shutdown = async (): Promise<void> => {
    clearInterval(timer);
    await sync.flush(); // a graceful exit loses nothing
    sync.stop();
    await handle.shutdown();
    process.disconnect();
  };
  process.on('message', (message: { demo?: string }) => {
    if (message?.demo === 'shutdown') void shutdown();
  });
  process.once('SIGINT', () => undefined); // the primary coordinates the shutdown
}

if (cluster.isPrimary) {
  void primary(Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 9464));
} else {
  void worker();
}
