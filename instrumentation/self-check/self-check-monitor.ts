import { diag } from '@opentelemetry/api';
import { hasDiagLogger, packageDiag } from '../../views/common/package-diag';
import { checkObject, shown } from '../../views/common/option-checks';
import type { SilentFamilyCheck } from './self-check';
import type { SelfCheckOptions, SelfCheckReport, SilentFamily } from './types';

export const DEFAULT_SELF_CHECK_INTERVAL_SECONDS = 60;

/** A family is warned about when it is reported silent by this many checks in a row (once per silent spell). */
const WARN_AFTER_CHECKS = 2;

/** How soon after the first request a wiring mistake (logStats off) is warned about. */
export const WIRING_PROBE_MILLIS = 10_000;

const PREFIX = 'omni-otel-metrics self-check:';

export interface LineSink {
  info(line: string): void;
}

/** Throws on a bad `selfCheck` option (registration refuses it before anything starts). */
export function resolveSelfCheckInterval(option: false | SelfCheckOptions | undefined): number | undefined {
  if (option === false) return undefined;
  if (option === undefined) return DEFAULT_SELF_CHECK_INTERVAL_SECONDS;
  if (typeof option !== 'object' || option === null) throw new TypeError('selfCheck must be false or { intervalSeconds }');
  checkObject(option, 'selfCheck', ['intervalSeconds']);
  const seconds = option.intervalSeconds ?? DEFAULT_SELF_CHECK_INTERVAL_SECONDS;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new RangeError(`selfCheck.intervalSeconds must be a finite number > 0; got ${shown(seconds)}`);
  }
  return seconds;
}

/**
 * Runs the self-check periodically and warns about families that stay silent across two checks in
 * a row; one line per check at most, each family once per silent spell. Prints a one-line summary
 * at `stop()`. Both go to the log sink (default: the console) and to the application's diag
 * logger when one is installed. Never throws: a failed check is one diag warning.
 */
export class SelfCheckMonitor {
  private readonly timer: ReturnType<typeof setInterval>;
  /** Looks for wiring mistakes until the first requests have shown whether there are any. */
  private wiringProbe: ReturnType<typeof setInterval> | undefined;
  /** Consecutive reports per entry (family name, plus `@replicas` for replica entries); entries no longer reported leave. */
  private readonly reported = new Map<string, number>();
  private failureWarned = false;
  private stopped = false;

  constructor(
    private readonly check: SilentFamilyCheck,
    intervalSeconds: number,
    private readonly sink?: LineSink,
  ) {
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.round(intervalSeconds * 1000)));
    this.timer.unref();
    this.wiringProbe = setInterval(() => this.probeWiring(), WIRING_PROBE_MILLIS);
    this.wiringProbe.unref();
  }

  /**
   * Runs until requests have been seen, then once more never: a mistake that empties every family
   * is said within ten seconds of the first request, not after two periodic checks.
   */
  probeWiring(): void {
    let mistakes: string[] | undefined;
    try {
      mistakes = this.check.wiringMistakes();
    } catch {
      mistakes = [];
    }
    if (mistakes === undefined) return;
    this.stopWiringProbe();
    for (const mistake of mistakes) this.emit(`${PREFIX} ${mistake}`, true);
  }

  private stopWiringProbe(): void {
    if (this.wiringProbe === undefined) return;
    clearInterval(this.wiringProbe);
    this.wiringProbe = undefined;
  }

  /** One periodic check: warns about entries that have just persisted for two checks. */
  tick(): void {
    const report = this.run();
    if (report === undefined) return;
    const persisting = report.silent.filter((entry) => this.reported.get(entryKey(entry)) === WARN_AFTER_CHECKS);
    if (persisting.length === 0) return;
    const line = `${PREFIX} ${count(persisting.length, 'family', 'families')} received nothing while requests flowed (${WARN_AFTER_CHECKS} checks in a row): ${describe(persisting)}`;
    this.emit(line, true);
  }

  /** Stops the timer; runs a last check and prints its one-line summary. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.stopWiringProbe();
    const report = this.run();
    if (report === undefined) return;
    // A console nobody configured is not told about a run that saw no request: there is nothing to report.
    if (report.requestsObserved === 0 && this.sink === undefined && !hasDiagLogger()) return;
    // Info, not warn: the periodic warning already spoke; the summary is a record of the run.
    this.emit(summaryLine(report), false);
  }

  private run(): SelfCheckReport | undefined {
    try {
      const report = this.check.check();
      const seen = new Set<string>();
      for (const entry of report.silent) {
        const key = entryKey(entry);
        seen.add(key);
        this.reported.set(key, (this.reported.get(key) ?? 0) + 1);
      }
      for (const key of this.reported.keys()) if (!seen.has(key)) this.reported.delete(key);
      return report;
    } catch (error) {
      if (!this.failureWarned) packageDiag.warn(`${PREFIX} a check failed; the self-check is skipped until the next one`, error);
      this.failureWarned = true;
      return undefined;
    }
  }

  /**
   * With a sink: to it, and to the application's diag logger when one is installed. Without one:
   * to the application's diag logger when one is installed (its level decides), else to the console
   * (the warning on `console.warn`, the summary on `console.info`), so a default setup hears both.
   */
  private emit(line: string, warn: boolean): void {
    if (hasDiagLogger()) {
      if (warn) diag.warn(line);
      else diag.info(line);
    }
    if (this.sink === undefined) {
      if (!hasDiagLogger()) (warn ? console.warn : console.info)(line);
      return;
    }
    try {
      this.sink.info(line);
    } catch {
      // The host's sink failing is not ours to raise.
    }
  }
}

/** The shutdown line: requests seen, and which families stayed silent (or that none did). */
export function summaryLine(report: SelfCheckReport): string {
  if (report.requestsObserved === 0) return `${PREFIX} no requests observed, nothing to check`;
  const requests = count(report.requestsObserved, 'request', 'requests');
  if (report.silent.length === 0) return `${PREFIX} ${requests} observed; every expected family received data`;
  return `${PREFIX} ${requests} observed; ${count(report.silent.length, 'family', 'families')} silent: ${describe(report.silent)}`;
}

/** Names grouped by reason, in report order: `a, b (host-method-not-called: sendToNextStage); c (log-stats-off)`. */
function describe(entries: readonly SilentFamily[]): string {
  const groups = new Map<string, string[]>();
  for (const entry of entries) {
    const label = reasonLabel(entry);
    const names = groups.get(label);
    if (names === undefined) groups.set(label, [entry.name]);
    else names.push(entry.name);
  }
  return [...groups].map(([label, names]) => `${names.join(', ')} (${label})`).join('; ');
}

function reasonLabel(entry: SilentFamily): string {
  switch (entry.reason) {
    case 'host-method-not-called':
      return `${entry.reason}: ${entry.method ?? entry.source}`;
    case 'replica-not-polled':
      return `${entry.reason}: ${(entry.replicas ?? []).map((ref) => `stage ${ref.stage} replica ${ref.replica}`).join(', ')}`;
    case 'no-data-from-source':
      return `${entry.reason}: ${entry.source}`;
    case 'log-stats-off':
      return `${entry.reason}: set logStats: true`;
    default:
      return entry.reason;
  }
}

function entryKey(entry: SilentFamily): string {
  return entry.reason === 'replica-not-polled' ? `${entry.name}@replicas` : entry.name;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
