import { monitorEventLoopDelay } from 'node:perf_hooks';
import { request } from 'node:http';
import { registerOmniMetrics } from '../register';
import { populateAllSeries } from './populate-all';

function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
    }).on('error', reject).end();
  });
}

async function main(): Promise<void> {
  const replicas = Number(process.argv[2] ?? 256);
  const concurrent = Number(process.argv[3] ?? 1);
  const gz = process.argv[4] === 'gzip';
  const t0 = performance.now();
  const handle = await registerOmniMetrics({
    modelName: 'm', stagePools: [replicas, replicas, replicas], logStats: true, showHiddenMetrics: true,
    features: { specDecode: { numSpeculativeTokens: 3 }, kvConnector: 'nixl', lora: { maxLoras: 2 }, kvCacheMetrics: true, corruptedRequests: true },
    cacheConfig: { block_size: 16, cache_dtype: 'auto', enable_prefix_caching: true, num_gpu_blocks: 4096 },
    prometheus: { port: 0 }, exporters: ['prometheus'], logIntervalSeconds: 0, processMetrics: false,
  });
  const t1 = performance.now();
  populateAllSeries(handle.store, handle.stageReplicaMap.entries().map(([, e]) => e));
  const url = handle.prometheusServer!.url;
  await get(url);
  for (let round = 0; round < 3; round++) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    const rss0 = process.memoryUsage().rss;
    const cpu0 = process.cpuUsage();
    h.enable();
    const s = performance.now();
    const sizes = await Promise.all(Array.from({ length: concurrent }, () => get(url, gz ? { 'Accept-Encoding': 'gzip' } : {})));
    const e = performance.now();
    h.disable();
    const cpu = process.cpuUsage(cpu0);
    console.log(JSON.stringify({ replicas, concurrent, gz, register_ms: +(t1 - t0).toFixed(1), bytes: sizes[0], wall_ms: +(e - s).toFixed(1), cpu_ms: (cpu.user + cpu.system) / 1000, max_block_ms: h.max / 1e6, rss_growth_mb: +((process.memoryUsage().rss - rss0) / 2 ** 20).toFixed(1), renderings: (handle.prometheusReader as any).sharedRenderings?.started, maxSlice: (globalThis as any).__maxSlice }));
  }
  await handle.shutdown();
}
void main();
