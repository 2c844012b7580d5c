import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Counter, Registry } from 'prom-client';
import { resolveCatalog } from '../views/catalog';
import { SeriesStore } from '../views/store/series-store';
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const N = 20000;
function per(create: () => unknown): number {
  gc(); gc();
  const u0 = process.memoryUsage(); const b = u0.heapUsed + u0.arrayBuffers;
  const kept = create();
  gc(); gc();
  const u1 = process.memoryUsage();
  if (!kept) throw new Error();
  return (u1.heapUsed + u1.arrayBuffers - b) / N;
}
const key = process.argv[2] ?? 'upstream.promptTokens';
const ours = per(() => {
  const store = new SeriesStore(resolveCatalog({ logStats: true }), { modelName: 'm', cardinalityLimit: N + 1 });
  const f = store.family(key as never)!;
  const kept = [];
  for (let i = 0; i < N; i++) { const s = f.bind(f.family.labels.map((l, j) => (j === f.family.labels.length - 1 ? String(i) : l === 'model_name' ? 'm' : String(i % 3)))); s.record(1); kept.push(s); }
  return [store, kept];
});
const prom = per(() => {
  const r = new Registry();
  const c = new Counter({ name: 'x_total', help: 'h', labelNames: ['model_name', 'stage', 'replica'], registers: [r] });
  for (let i = 0; i < N; i++) c.labels({ model_name: 'm', stage: String(i % 3), replica: String(i) }).inc(1);
  return r;
});
console.log(key, 'ours', ours.toFixed(0), 'prom-client', prom.toFixed(0));
