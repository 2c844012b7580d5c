import { spawnSync } from 'node:child_process';
import { feedOf } from '../instrumentation/hooks/handle-feed';
import { OmniInstrumentation, registerOmniMetrics, type OmniMetricsHandle, type OmniRecorders } from '../index';
import type { EngineSeries } from '../instrumentation/recorders/engine-series';
import { resolveCatalog, type FamilyKey } from '../views/catalog/catalog';
import { DEFAULT_NATIVE_MAX_BUCKETS, DEFAULT_NATIVE_SCHEMA, DEFAULT_NATIVE_ZERO_THRESHOLD } from '../views/store/native-buckets';
import { SeriesStore } from '../views/store/series-store';
import { collectGarbage } from './contenders/contender-main';
import { createBenchHost } from './bench-host';

/**
 * Checks of how V8 lays out what the record path reads and of the heap it keeps, with the V8
 * flags they need (`--allow-natives-syntax`, `--expose-gc`): kept out of the test suite, which
 * asserts behaviour and changes no flag. Run `npx tsx bench/layout-checks.ts`; it restarts itself
 * with the flags, prints each figure beside its bound and exits non-zero when one is over.
 */
const FLAGS = ['--allow-natives-syntax', '--expose-gc'];

interface Check {
  readonly name: string;
  readonly run: () => Promise<Array<[figure: string, within: boolean]>>;
}

const quiet = (options: Parameters<typeof registerOmniMetrics>[0] | object = {}): Promise<OmniMetricsHandle> =>
  registerOmniMetrics({ modelName: 'm', prometheus: false, exporters: [], logIntervalSeconds: 0, selfCheck: false, processMetrics: false, ...options });

/** V8's own answer to "is this object a hash table?" (a dictionary-mode object costs a hash lookup per property read). */
function hasFastProperties(object: object): boolean {
  return (new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean)(object);
}

function retainedBytes(): number {
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** Heap (and typed-array storage) per series of one family, bound with three labels as a replica's series are, each fed `values`. */
function bytesPerSeries(key: FamilyKey, values: readonly number[], native: boolean, series: number): number {
  const before = retainedBytes();
  const store = new SeriesStore(resolveCatalog({ logStats: true }), {
    modelName: 'm',
    cardinalityLimit: series + 1,
    nativeHistograms: native
      ? {
          config: { schema: DEFAULT_NATIVE_SCHEMA, maxBuckets: DEFAULT_NATIVE_MAX_BUCKETS, zeroThreshold: DEFAULT_NATIVE_ZERO_THRESHOLD },
          families: new Set(['vllm:time_to_first_token_seconds']),
        }
      : undefined,
  });
  const family = store.family(key);
  if (family === undefined) throw new Error(`no family ${key}`);
  for (let i = 0; i < series; i++) {
    const bound = family.bind(['m', String(i % 3), String(i)]);
    for (const value of values) bound.record(value);
  }
  const bytes = (retainedBytes() - before) / series;
  if (family.series.length !== series) throw new Error(`${family.series.length} series bound, not ${series}`);
  return bytes;
}

const within = (label: string, value: number, bound: number, unit = 'B'): [string, boolean] => [
  `${label}: ${value.toFixed(0)} ${unit} (bound ${bound} ${unit})`,
  value < bound,
];

const CHECKS: readonly Check[] = [
  {
    name: "fast properties: the hooks' recorders, the feed, the observer, each engine's record and series",
    run: async () => {
      const results: Array<[string, boolean]> = [];
      for (const meterProvider of [undefined, 'external' as const]) {
        const handle = await quiet({ stagePools: [2, 1], logStats: true, ...(meterProvider === undefined ? {} : { meterProvider }) });
        try {
          const feed = feedOf(handle);
          const observer = feed.observer;
          const recorders = (observer as unknown as { recorders: OmniRecorders }).recorders;
          const engines = (handle.statLogger as unknown as { engines: Map<number, { series: EngineSeries }> }).engines;
          const objects: Array<[string, object]> = [
            ['recorders', recorders],
            ['feed', feed],
            ['observer', observer],
            ...[...engines.values()].flatMap((entry, i): Array<[string, object]> => [
              [`engine ${i} record`, entry],
              [`engine ${i} series`, entry.series],
            ]),
          ];
          for (const [name, object] of objects) results.push([`${meterProvider ?? 'own provider'}: ${name}`, hasFastProperties(object)]);
        } finally {
          await handle.shutdown();
        }
      }
      return results;
    },
  },
  {
    name: 'fast properties: a patched prototype after its first call, and after disable()',
    run: async () => {
      class Orchestrator {
        readonly stagePools = [];
        addRequest(): void {}
        pollEngine(): { timestamp: number; outputs: [] } {
          return { timestamp: 1, outputs: [] };
        }
        submitToStage(): void {}
      }
      const handle = await quiet({ stagePools: [1] });
      const instrumentation = new OmniInstrumentation({ metrics: handle, orchestratorClass: Orchestrator, diagnosticsChannels: false });
      try {
        new Orchestrator().pollEngine();
        const patched = hasFastProperties(Orchestrator.prototype);
        instrumentation.disable();
        new Orchestrator().pollEngine();
        return [
          ['patched, after one call', patched],
          ['restored, after one call', hasFastProperties(Orchestrator.prototype)],
        ];
      } finally {
        instrumentation.disable();
        await handle.shutdown();
      }
    },
  },
  {
    name: 'bytes per series, 10 000 series (prom-client holds a counter or gauge child in about 210 bytes)',
    run: async () => [
      within('counter', bytesPerSeries('upstream.promptTokens', [3], false, 10_000), 250),
      within('gauge', bytesPerSeries('upstream.numRequestsRunning', [0.5], false, 10_000), 250),
      within('histogram, 22 buckets', bytesPerSeries('upstream.timeToFirstTokenSeconds', [0.2], false, 10_000), 500),
    ],
  },
  {
    name: 'native buckets added to a TTFT series, 5 000 series',
    run: async () => {
      const classic = bytesPerSeries('upstream.timeToFirstTokenSeconds', [0.2], false, 5_000);
      // 200 first-token latencies from 30 ms to 3 s (two decades: 54 buckets at schema 3).
      const spread = Array.from({ length: 200 }, (_, i) => 0.03 * 100 ** (i / 199));
      return [
        within('one observation', bytesPerSeries('upstream.timeToFirstTokenSeconds', [0.2], true, 5_000) - classic, 450),
        within('latencies over two decades', bytesPerSeries('upstream.timeToFirstTokenSeconds', spread, true, 5_000) - classic, 1024),
      ];
    },
  },
  {
    name: '100 000 distinct stage names past the cardinality cap: heap kept after the cap is reached',
    run: async () => {
      const handle = await quiet({ stagePools: [1], logStats: true });
      try {
        let afterCap = 0;
        for (let i = 0; i < 100_000; i++) {
          handle.audio.observeAudioTtfp(`stage-${i}`, 0, 0.1);
          if (i % 1000 === 999) await handle.metricsText();
          if (i === 1999) afterCap = retainedBytes();
        }
        return [within('growth', (retainedBytes() - afterCap) / 2 ** 20, 64, 'MiB')];
      } finally {
        await handle.shutdown();
      }
    },
  },
  {
    name: '100 000 served requests, 10 % aborted and 1 % never read nor closed (ended by the idle timeout): heap kept',
    run: async () => {
      const handle = await quiet({ stagePools: [1, 2], logStats: true });
      const { Orchestrator, Serving } = createBenchHost();
      const instrumentation = new OmniInstrumentation({
        metrics: handle,
        orchestratorClass: Orchestrator,
        servingClass: Serving,
        diagnosticsChannels: false,
        requestIdleTimeoutMillis: 100,
      });
      try {
        const serving = new Serving();
        const kept: unknown[] = [];
        const before = retainedBytes();
        for (let i = 0; i < 100_000; i++) {
          const stream = serving.generate({ requestId: `soak-${i}`, stageId: 1, replicaId: i % 2 });
          if (i % 100 === 7) kept.push(stream);
          else if (i % 10 === 3) {
            await stream.next();
            await stream.return(undefined);
          } else for await (const _ of stream) void _;
        }
        await new Promise((resolve) => setTimeout(resolve, 400));
        return [within(`growth with ${kept.length} streams still referenced`, (retainedBytes() - before) / 2 ** 20, 32, 'MiB')];
      } finally {
        instrumentation.disable();
        await handle.shutdown();
      }
    },
  },
];

async function main(): Promise<void> {
  let failed = 0;
  for (const check of CHECKS) {
    console.log(check.name);
    for (const [figure, ok] of await check.run()) {
      console.log(`  ${ok ? 'ok  ' : 'OVER'} ${figure}`);
      if (!ok) failed++;
    }
  }
  process.exitCode = failed === 0 ? 0 : 1;
}

if (typeof (globalThis as { gc?: unknown }).gc === 'function') {
  void main();
} else {
  const child = spawnSync(process.execPath, [...FLAGS, '--import', 'tsx', __filename], { stdio: 'inherit' });
  process.exitCode = child.status ?? 1;
}
