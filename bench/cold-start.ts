import { join } from 'node:path';
import { RESULT_MARKER, runNode } from './child';

export const COLD_START_CONTENDERS = ['ours', 'prom-client', 'sdk'] as const;
export type ColdStartContender = (typeof COLD_START_CONTENDERS)[number];

const ROOT = join(__dirname, '..');
const DIST = join(ROOT, 'dist');

/** What `require` loads for each contender: the built package, prom-client, the stock SDK with its Prometheus exporter. */
const MODULES: Readonly<Record<ColdStartContender, readonly string[]>> = {
  ours: [DIST],
  'prom-client': ['prom-client'],
  sdk: ['@opentelemetry/sdk-metrics', '@opentelemetry/exporter-prometheus'],
};

/**
 * Registration of the same families with every engine series bound (zeroed), and the first
 * scrape, for each contender; plain JavaScript, so the process runs the built code without tsx.
 */
const REGISTER: Readonly<Record<ColdStartContender, string>> = {
  ours: `
    const [omni] = modules;
    const handle = await omni.registerOmniMetrics({ modelName: 'm', stagePools: pools, logStats: true, prometheus: false, exporters: [], logIntervalSeconds: 0, selfCheck: false });
    return { register: now(), scrape: () => handle.metricsText() };`,
  'prom-client': `
    const [prom] = modules;
    const registry = new prom.Registry();
    for (const f of families) {
      const labelNames = [...f.labels];
      const common = { name: f.name, help: f.help, labelNames, registers: [registry] };
      const metric = f.type === 'counter' ? new prom.Counter(common) : f.type === 'gauge' ? new prom.Gauge(common) : new prom.Histogram({ ...common, buckets: Array.isArray(f.buckets) ? [...f.buckets] : undefined });
      if (engineOnly(f)) for (const labels of engineLabels) f.type === 'counter' ? metric.inc(labels, 0) : f.type === 'gauge' ? metric.set(labels, 0) : metric.zero(labels);
    }
    return { register: now(), scrape: () => registry.metrics() };`,
  sdk: `
    const [sdk, prometheus] = modules;
    const exporter = new prometheus.PrometheusExporter({ preventServerStart: true });
    const provider = new sdk.MeterProvider({ readers: [exporter] });
    const meter = provider.getMeter('bench');
    for (const f of families) {
      const options = { description: f.help, advice: Array.isArray(f.buckets) ? { explicitBucketBoundaries: [...f.buckets] } : undefined };
      const instrument = f.type === 'counter' ? meter.createCounter(f.name, options) : f.type === 'gauge' ? meter.createGauge(f.name, options) : meter.createHistogram(f.name, options);
      if (engineOnly(f) && f.type !== 'histogram') for (const labels of engineLabels) f.type === 'counter' ? instrument.add(0, labels) : instrument.record(0, labels);
    }
    const serializer = new prometheus.PrometheusSerializer();
    return { register: now(), scrape: async () => serializer.serialize((await exporter.collect()).resourceMetrics) };`,
};

/** `require` time of the contender's modules, in a fresh process. */
export function requireScript(contender: ColdStartContender): string {
  return `
    const start = process.hrtime.bigint();
    for (const name of ${JSON.stringify(MODULES[contender])}) require(name);
    console.log(${JSON.stringify(RESULT_MARKER)} + JSON.stringify({ requireNs: Number(process.hrtime.bigint() - start) }));`;
}

/** Registration at 3 × `replicas` and the first scrape after it, in a fresh process (modules already loaded). */
export function registerScript(contender: ColdStartContender, replicas: number): string {
  return `
    const { resolveCatalog } = require(${JSON.stringify(join(DIST, 'views', 'catalog', 'catalog'))});
    const families = resolveCatalog({ logStats: true }).families.filter((f) => f.group !== 'process');
    const pools = [${replicas}, ${replicas}, ${replicas}];
    const engineLabels = pools.flatMap((count, stage) => Array.from({ length: count }, (_, replica) => ({ model_name: 'm', stage: String(stage), replica: String(replica) })));
    const engineOnly = (f) => f.labels.length === 3 && ['model_name', 'stage', 'replica'].every((l) => f.labels.includes(l));
    const modules = ${JSON.stringify(MODULES[contender])}.map((name) => require(name));
    let mark = process.hrtime.bigint();
    const now = () => { const t = process.hrtime.bigint(); const ns = Number(t - mark); mark = t; return ns; };
    (async () => {
      now();
      const { register, scrape } = await (async () => {${REGISTER[contender]}
      })();
      await scrape();
      const firstScrapeNs = now();
      console.log(${JSON.stringify(RESULT_MARKER)} + JSON.stringify({ registerNs: register, firstScrapeNs }));
      process.exit(0);
    })().catch((error) => { console.error(error); process.exit(1); });`;
}

export function runColdStart(script: string): Promise<Record<string, number>> {
  return runNode(['-e', script], 120_000, ROOT);
}
