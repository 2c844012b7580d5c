import { WarnOnce } from '../../views/common/diag-warnings';
import type { SeriesStore } from '../../views/store/series-store';
import { SYSTEM_PROC, type ProcReader } from './proc-files';
import { CLOCK_TICKS_PER_SECOND, parseBootTime, parseMaxOpenFiles, parseProcStat } from './proc-parsers';
import { ReadCounter, ReadGauge } from './read-series';

export interface ProcessCollectorOptions {
  /** Read `/proc/self` as prometheus_client does; default on Linux only. */
  readonly procfs?: boolean;
  /** Where `/proc` is read from; tests substitute one. Default the real files. */
  readonly proc?: ProcReader;
}

/**
 * The six `process_*` families of prometheus_client's `ProcessCollector`, read at each
 * collection. On Linux from `/proc/self` as it reads them: `stat` (virtual memory, start time,
 * CPU seconds), `fd` (open files, the listing's own descriptor included, as Python's
 * `os.listdir` counts it), `limits` (max open files), and `/proc/stat`'s boot time. Elsewhere
 * from what Node offers (resident memory, CPU seconds, start time); the rest is left out.
 *
 * Never throws: a value that cannot be read is left as it was (or out, if never read), and
 * warned about once.
 */
export class ProcessCollector {
  private readonly procfs: boolean;
  private readonly proc: ProcReader;
  private readonly warnings = new WarnOnce();
  private bootTimeSeconds: number | undefined;
  private readonly virtualMemory: ReadGauge;
  private readonly residentMemory: ReadGauge;
  private readonly startTime: ReadGauge;
  private readonly cpuSeconds: ReadCounter;
  private readonly openFds: ReadGauge;
  private readonly maxFds: ReadGauge;

  constructor(store: SeriesStore, options: ProcessCollectorOptions = {}) {
    this.procfs = options.procfs ?? process.platform === 'linux';
    this.proc = options.proc ?? SYSTEM_PROC;
    this.virtualMemory = new ReadGauge(store, 'process.virtualMemoryBytes');
    this.residentMemory = new ReadGauge(store, 'process.residentMemoryBytes');
    this.startTime = new ReadGauge(store, 'process.startTimeSeconds');
    this.cpuSeconds = new ReadCounter(store, 'process.cpuSeconds');
    this.openFds = new ReadGauge(store, 'process.openFds');
    this.maxFds = new ReadGauge(store, 'process.maxFds');
  }

  collect(): void {
    // libuv reads this from /proc/self/stat (resident pages × the page size) on Linux, exactly the
    // value prometheus_client computes, with the page size Node cannot ask for.
    this.read('resident memory', () => this.residentMemory.set(process.memoryUsage.rss()));
    if (this.procfs) this.collectProcfs();
    else this.collectFromNode();
  }

  private collectProcfs(): void {
    this.read('/proc/self/stat', () => {
      const stat = parseProcStat(this.proc.readFile('/proc/self/stat'));
      this.virtualMemory.set(stat.virtualMemoryBytes);
      // The same arithmetic as prometheus_client, so the printed digits match.
      this.cpuSeconds.setTotal(stat.userTicks / CLOCK_TICKS_PER_SECOND + stat.systemTicks / CLOCK_TICKS_PER_SECOND);
      const bootTime = (this.bootTimeSeconds ??= this.readBootTime());
      if (bootTime !== undefined) this.startTime.set(stat.startTicks / CLOCK_TICKS_PER_SECOND + bootTime);
    });
    this.read('/proc/self/fd', () => this.openFds.set(this.proc.readDir('/proc/self/fd').length));
    this.read('/proc/self/limits', () => this.maxFds.set(parseMaxOpenFiles(this.proc.readFile('/proc/self/limits'))));
  }

  private collectFromNode(): void {
    this.read('cpu usage', () => {
      const { user, system } = process.cpuUsage();
      this.cpuSeconds.setTotal((user + system) / 1e6);
    });
    this.startTime.set(performance.timeOrigin / 1000);
  }

  /** Read once: the boot time does not change while the process runs. */
  private readBootTime(): number | undefined {
    let bootTime: number | undefined;
    this.read('/proc/stat', () => {
      bootTime = parseBootTime(this.proc.readFile('/proc/stat'));
    });
    return bootTime;
  }

  private read(source: string, update: () => void): void {
    try {
      update();
    } catch (error) {
      this.warnings.warn(source, `process metrics: cannot read ${source}; the values it gives are left as they were`, error);
    }
  }
}
