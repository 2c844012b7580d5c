import { PerformanceObserver, performance } from 'node:perf_hooks';
import type * as HostPatches from '../../instrumentation/hooks/host-patches';
import type { MethodPatch } from '../../instrumentation/hooks/host-patches';
import type * as HostWrappers from '../../instrumentation/hooks/host-wrappers';
import { createSchedulerStats, type EngineCoreOutputs } from '../../index';
import { builtModule, builtPackage } from '../built-package';
import { median } from '../measure';
import { decodeOutputsOf, type RecordPathContender } from '../record-path-contenders';
import { collectGarbage, contenderMain } from './contender-main';

/** One host poll on the record path, alone in this process (the contenders: `record-path-contenders.ts`). */
/** Polls whose allocations are counted: few enough that even 10 kB a poll fits the young generation. */
const ALLOCATION_POLLS = 5_000;

interface Params {
  readonly contender: RecordPathContender;
  readonly polls: number;
  readonly blocks: number;
}

contenderMain(async ({ contender, polls, blocks }: Params) => {
  const { OmniInstrumentation, registerOmniMetrics } = builtPackage();
  const { orchestratorWrapper } = builtModule<typeof HostWrappers>('instrumentation/hooks/host-wrappers.js');
  const { listenTo, NO_LISTENERS } = builtModule<typeof HostPatches>('instrumentation/hooks/host-patches.js');
  const decodeOutputs = decodeOutputsOf(contender);
  const schedulerStats = createSchedulerStats({ numRunningReqs: decodeOutputs, kvCacheUsage: 0.5 });
  const statsOnly: EngineCoreOutputs = { timestamp: 1, outputs: [], schedulerStats };
  const decode: EngineCoreOutputs = {
    timestamp: 1,
    outputs: Array.from({ length: decodeOutputs }, (_, i) => ({ requestId: `r${i}`, numNewTokens: 1 })),
    schedulerStats,
  };
  class Host {
    readonly stagePools = [];
    outputs = statsOnly;
    pollEngine(_stage: number, _replica: number): EngineCoreOutputs {
      return this.outputs;
    }
    submitToStage(_request: unknown): void {}
  }
  const host = new Host();
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: [1],
    logStats: contender !== 'stats-off',
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    selfCheck: false,
    processMetrics: false,
    nativeHistograms: contender === 'decode-poll-native',
  });
  if (contender === 'idle-wrapper') {
    // The patch with nobody listening, as it stays when another tool wrapped over it: its last
    // listener left while it could not be taken out of the chain.
    listenTo(Host.prototype, 'pollEngine', {}, orchestratorWrapper('pollEngine') as never);
    const patches = (Host.prototype as unknown as Record<symbol, Map<string, MethodPatch<unknown>>>)[Symbol.for('omni-otel-metrics.host-patches')];
    const patch = patches?.get('pollEngine');
    if (patch === undefined) throw new Error('pollEngine was not patched');
    // A build from before `NO_LISTENERS` (side by side) marks an idle patch with an empty list.
    patch.listeners = (NO_LISTENERS as readonly never[] | undefined) ?? [];
  } else if (contender !== 'direct') {
    new OmniInstrumentation({ metrics: handle, orchestratorClass: Host, diagnosticsChannels: false });
  }
  if (decodeOutputs > 0) {
    for (let i = 0; i < decodeOutputs; i++) {
      (host.submitToStage as (request: unknown) => void)({ requestId: `r${i}`, stageId: 0, replicaId: 0, arrivalTime: 1, promptTokenCount: 5, maxTokens: 1e9 });
    }
    host.outputs = decode;
  }
  const poll = (n: number): void => {
    for (let i = 0; i < n; i++) host.pollEngine(0, 0);
  };
  poll(polls); // warm up: optimized code, grown arrays

  const nsPerPoll: number[] = [];
  for (let block = 0; block < blocks; block++) {
    const start = performance.now();
    poll(polls);
    nsPerPoll.push(((performance.now() - start) * 1e6) / polls);
  }

  // Allocation, after the timed blocks: by then V8 has compiled every function the poll runs, and
  // a compilation finishing inside the window (tens of kilobytes of code, once) is not counted as
  // the polls' own. Heap growth over `ALLOCATION_POLLS` polls with a young generation large enough
  // that no collection runs in between (checked: a collection voids the figure).
  let collections = 0;
  const gcObserver = new PerformanceObserver((list) => (collections += list.getEntries().length));
  gcObserver.observe({ entryTypes: ['gc'] });
  collectGarbage();
  // The observer hears of collections asynchronously: let the forced ones arrive before counting.
  await new Promise((resolve) => setTimeout(resolve, 100));
  collections = 0;
  const before = process.memoryUsage().heapUsed;
  poll(ALLOCATION_POLLS);
  const bytesPerPoll = (process.memoryUsage().heapUsed - before) / ALLOCATION_POLLS;
  await new Promise((resolve) => setTimeout(resolve, 100));
  gcObserver.disconnect();
  await handle.shutdown();
  return {
    nsPerPoll: median(nsPerPoll.sort((a, b) => a - b)),
    bytesPerPoll: collections === 0 ? bytesPerPoll : NaN,
    bytesPerToken: decodeOutputs > 0 && collections === 0 ? bytesPerPoll / decodeOutputs : NaN,
  };
});
