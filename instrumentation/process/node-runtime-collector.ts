import { WarnOnce } from '../../views/common/diag-warnings';
import type { SeriesStore } from '../../views/store/series-store';
import { EventLoopLag } from './event-loop-lag';
import { ReadGauge } from './read-series';

/** `process._getActiveHandles` / `_getActiveRequests`: undocumented, present in every Node so far, and what prom-client reads. */
interface ActiveResourceLists {
  _getActiveHandles?: () => unknown[];
  _getActiveRequests?: () => unknown[];
}

/**
 * The `nodejs_*` gauges, read at each collection from Node itself, as prom-client's
 * `collectDefaultMetrics` reads them: event loop lag, active handles and requests, V8 heap
 * size and use, external memory, version. Never throws: a value that cannot be read is left as
 * it was, and warned about once. (GC durations are observed, not read: `GcDurations`.)
 */
export class NodeRuntimeCollector {
  private readonly lag = new EventLoopLag();
  private readonly warnings = new WarnOnce();
  private readonly eventLoopLag: ReadGauge;
  private readonly activeHandles: ReadGauge;
  private readonly activeRequests: ReadGauge;
  private readonly heapTotal: ReadGauge;
  private readonly heapUsed: ReadGauge;
  private readonly externalMemory: ReadGauge;
  private readonly versionInfo: ReadGauge;

  constructor(store: SeriesStore) {
    this.eventLoopLag = new ReadGauge(store, 'process.nodejsEventloopLag');
    this.activeHandles = new ReadGauge(store, 'process.nodejsActiveHandles');
    this.activeRequests = new ReadGauge(store, 'process.nodejsActiveRequests');
    this.heapTotal = new ReadGauge(store, 'process.nodejsHeapSizeTotal');
    this.heapUsed = new ReadGauge(store, 'process.nodejsHeapSizeUsed');
    this.externalMemory = new ReadGauge(store, 'process.nodejsExternalMemory');
    const [major, minor, patch] = process.versions.node.split('.');
    this.versionInfo = new ReadGauge(store, 'process.nodejsVersionInfo', [process.version, major ?? '', minor ?? '', patch ?? '']);
  }

  collect(): void {
    this.read('event loop lag', () => {
      const seconds = this.lag.sample();
      if (seconds !== undefined) this.eventLoopLag.set(seconds);
    });
    const lists = process as unknown as ActiveResourceLists;
    if (typeof lists._getActiveHandles === 'function') this.read('active handles', () => this.activeHandles.set(lists._getActiveHandles?.().length ?? 0));
    if (typeof lists._getActiveRequests === 'function') this.read('active requests', () => this.activeRequests.set(lists._getActiveRequests?.().length ?? 0));
    this.read('memory usage', () => {
      const memory = process.memoryUsage();
      this.heapTotal.set(memory.heapTotal);
      this.heapUsed.set(memory.heapUsed);
      this.externalMemory.set(memory.external);
    });
    this.versionInfo.set(1);
  }

  private read(source: string, update: () => void): void {
    try {
      update();
    } catch (error) {
      this.warnings.warn(source, `process metrics: cannot read the ${source}; the value is left as it was`, error);
    }
  }
}
