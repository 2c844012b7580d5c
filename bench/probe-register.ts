import { registerOmniMetrics } from '../register';
async function main(): Promise<void> {
  const replicas = Number(process.argv[2] ?? 256);
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const handle = await registerOmniMetrics({
      modelName: 'm', stagePools: [replicas, replicas, replicas], logStats: true,
      prometheus: false, exporters: [], logIntervalSeconds: 0, processMetrics: false,
    });
    const t1 = performance.now();
    let n = 0; for (const f of handle.store.families) n += f.series.length;
    console.log(`register 3x${replicas}: ${(t1 - t0).toFixed(1)} ms, ${n} series`);
    await handle.shutdown();
  }
}
void main();
