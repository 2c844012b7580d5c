import type { FamilyDefinition } from './family-definition';

/** The `kind` label values of `nodejs_gc_duration_seconds`, as prom-client names V8's collection kinds. */
export const GC_KINDS = ['major', 'minor', 'incremental', 'weakcb'] as const;
export type GcKind = (typeof GC_KINDS)[number];

/** prom-client's buckets for `nodejs_gc_duration_seconds`. */
export const GC_DURATION_BUCKETS: readonly number[] = [0.001, 0.01, 0.1, 1, 2, 5];

/** The labels of `nodejs_version_info`, in prom-client's order. */
export const NODE_VERSION_LABELS = ['version', 'major', 'minor', 'patch'] as const;

const NO_LABELS: readonly string[] = [];

/**
 * The families every official Prometheus client exports about the process it runs in, read when
 * a scrape or export collects them (never recorded), in the order a Python vLLM prints its own:
 * the runtime's families first (here Node's, named, described and bucketed as prom-client's
 * `collectDefaultMetrics` does, so Node dashboards work unchanged), then the six `process_*`
 * families of prometheus_client's `ProcessCollector`, byte for byte. Unlabelled, as every client
 * exports them. The clients build these without a creation time, so none prints `_created`.
 */
export const PROCESS_FAMILIES = {
  nodejsEventloopLag: {
    baseName: 'nodejs_eventloop_lag_seconds',
    type: 'gauge',
    help: 'Lag of event loop in seconds.',
    labels: NO_LABELS,
    unit: 's',
    group: 'process',
  },
  nodejsActiveHandles: {
    baseName: 'nodejs_active_handles_total',
    type: 'gauge',
    help: 'Total number of active handles.',
    labels: NO_LABELS,
    unit: '{handle}',
    group: 'process',
  },
  nodejsActiveRequests: {
    baseName: 'nodejs_active_requests_total',
    type: 'gauge',
    help: 'Total number of active requests.',
    labels: NO_LABELS,
    unit: '{request}',
    group: 'process',
  },
  nodejsHeapSizeTotal: {
    baseName: 'nodejs_heap_size_total_bytes',
    type: 'gauge',
    help: 'Process heap size from Node.js in bytes.',
    labels: NO_LABELS,
    unit: 'By',
    group: 'process',
    clusterMerge: 'sum',
  },
  nodejsHeapSizeUsed: {
    baseName: 'nodejs_heap_size_used_bytes',
    type: 'gauge',
    help: 'Process heap size used from Node.js in bytes.',
    labels: NO_LABELS,
    unit: 'By',
    group: 'process',
    clusterMerge: 'sum',
  },
  nodejsExternalMemory: {
    baseName: 'nodejs_external_memory_bytes',
    type: 'gauge',
    help: 'Node.js external memory size in bytes.',
    labels: NO_LABELS,
    unit: 'By',
    group: 'process',
    clusterMerge: 'sum',
  },
  nodejsVersionInfo: {
    baseName: 'nodejs_version_info',
    type: 'gauge',
    help: 'Node.js version info.',
    labels: NODE_VERSION_LABELS,
    unit: '',
    group: 'process',
  },
  nodejsGcDuration: {
    baseName: 'nodejs_gc_duration_seconds',
    type: 'histogram',
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labels: ['kind'],
    buckets: GC_DURATION_BUCKETS,
    unit: 's',
    group: 'process',
    omitCreated: true,
  },
  virtualMemoryBytes: {
    baseName: 'process_virtual_memory_bytes',
    type: 'gauge',
    help: 'Virtual memory size in bytes.',
    labels: NO_LABELS,
    unit: 'By',
    group: 'process',
    clusterMerge: 'sum',
  },
  residentMemoryBytes: {
    baseName: 'process_resident_memory_bytes',
    type: 'gauge',
    help: 'Resident memory size in bytes.',
    labels: NO_LABELS,
    unit: 'By',
    group: 'process',
    clusterMerge: 'sum',
  },
  startTimeSeconds: {
    baseName: 'process_start_time_seconds',
    type: 'gauge',
    help: 'Start time of the process since unix epoch in seconds.',
    labels: NO_LABELS,
    unit: 's',
    group: 'process',
    clusterMerge: 'min',
  },
  cpuSeconds: {
    baseName: 'process_cpu_seconds',
    type: 'counter',
    help: 'Total user and system CPU time spent in seconds.',
    labels: NO_LABELS,
    unit: 's',
    group: 'process',
    omitCreated: true,
  },
  openFds: {
    baseName: 'process_open_fds',
    type: 'gauge',
    help: 'Number of open file descriptors.',
    labels: NO_LABELS,
    unit: '{file_descriptor}',
    group: 'process',
  },
  maxFds: {
    baseName: 'process_max_fds',
    type: 'gauge',
    help: 'Maximum number of open file descriptors.',
    labels: NO_LABELS,
    unit: '{file_descriptor}',
    group: 'process',
    clusterMerge: 'max',
  },
} as const satisfies Record<string, FamilyDefinition>;

export type ProcessFamilyKey = keyof typeof PROCESS_FAMILIES;
