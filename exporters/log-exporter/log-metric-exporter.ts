import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { AggregationTemporality, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { appendFile } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
import type { ResolvedCatalog } from '../../views/catalog/catalog';
import { WarnOnce } from '../../views/common/diag-warnings';
import { knownFamilies, type KnownFamily } from './known-families';
import { formatLogLines, type LogMetricFormat } from './log-lines';
import { checkObject, checkOneOf, checkString, OmniOptionError, shown } from '../../views/common/option-checks';

const LOG_METRIC_FORMATS: readonly LogMetricFormat[] = ['statsd', 'json'];

/** Options of `LogMetricExporter`. */
export interface LogMetricExporterOptions {
  /** `statsd` (default): TorchServe's metric log line; `json`: JSON lines. */
  readonly format?: 'statsd' | 'json';
  /**
   * Where lines go: `stdout` (default), `stderr`, a writable stream (never ended by the exporter:
   * you own it), or `{ file }`, appended to and created if missing. The file is opened for each
   * export, so a log rotator may move it away between exports.
   */
  readonly destination?:
    | 'stdout'
    | 'stderr'
    | {
        write(chunk: string, callback: (error?: Error | null) => void): boolean;
        readonly writableEnded?: boolean;
        readonly destroyed?: boolean;
      }
    | { readonly file: string };
  /** The `hostname` field; default `os.hostname()`. */
  readonly hostname?: string;
  /**
   * The catalog of this configuration (`handle.catalog`), for the units of custom families from a
   * config file. Built-in families are known without it: under the default `vllm` naming
   * instruments carry no unit, so units come from the catalog.
   * @internal
   */
  readonly catalog?: ResolvedCatalog;
}

/** Where lines go (see `LogMetricExporterOptions.destination`). */
export type LogDestination = NonNullable<LogMetricExporterOptions['destination']>;

/** The part of a writable stream the exporter uses. */
export type LogLineStream = Extract<LogDestination, { write: unknown }>;

/**
 * A `PushMetricExporter` that writes one line per Prometheus sample, for users who ship logs
 * instead of scraping: the same families, names and labels as `/metrics`, in TorchServe's
 * StatsD-like format or as JSON lines (see `formatLogLines`). Use it with a periodic reader:
 *
 * ```ts
 * const exporter = new LogMetricExporter({ destination: { file: '/var/log/omni-metrics.log' } });
 * await registerOmniMetrics({ ..., readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 10_000 })] });
 * ```
 *
 * Temporality is cumulative for every instrument: each line carries the running total since
 * start, exactly the value a scrape would see at that moment (a counter never goes down; a
 * log-side rate is the difference of two lines).
 *
 * Write errors (a closed stream, an unwritable file) fail that export through its callback
 * (`ExportResultCode.FAILED`, reported by the reader); nothing is ever thrown into the host.
 */
export class LogMetricExporter implements PushMetricExporter {
  private readonly format: LogMetricFormat;
  private readonly hostname: string;
  private readonly destination: LogDestination;
  private readonly families: ReadonlyMap<string, KnownFamily>;
  private readonly warned = new WarnOnce();
  private pending: Promise<void> = Promise.resolve();
  private shutDown = false;

  constructor(options: LogMetricExporterOptions = {}) {
    checkObject(options, 'LogMetricExporter options', ['format', 'destination', 'hostname', 'catalog']);
    checkOneOf(options.format, 'format', LOG_METRIC_FORMATS);
    const format = options.format ?? 'statsd';
    const destination = options.destination ?? 'stdout';
    if (!isDestination(destination)) {
      throw new OmniOptionError('destination', `destination must be "stdout", "stderr", a writable stream or { file: path }; got ${shown(destination)}`);
    }
    checkString(options.hostname, 'hostname');
    this.format = format;
    this.destination = destination;
    this.hostname = options.hostname ?? osHostname();
    this.families = knownFamilies(options.catalog);
  }

  /**
   * Writes one line per sample of `metrics`, after the lines of every earlier export; the outcome reaches `resultCallback`,
   * and nothing is thrown. After `shutdown()`, every export fails.
   */
  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.shutDown) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('LogMetricExporter is shut down') });
      return;
    }
    let text: string;
    try {
      const lines = formatLogLines(metrics, { format: this.format, hostname: this.hostname, families: this.families, warned: this.warned });
      text = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: asError(error) });
      return;
    }
    // Exports are written one after another, so lines of two exports never interleave.
    this.pending = this.pending.then(() =>
      (text === '' ? Promise.resolve() : this.write(text)).then(
        () => resultCallback({ code: ExportResultCode.SUCCESS }),
        (error: unknown) => resultCallback({ code: ExportResultCode.FAILED, error: asError(error) }),
      ),
    );
  }

  /** Resolves once every line handed to `export` so far is written. */
  forceFlush(): Promise<void> {
    return this.pending;
  }

  /** Cumulative for every instrument kind: lines carry running totals, as a scrape does. */
  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.CUMULATIVE;
  }

  /** Finishes pending writes; later exports fail. Streams are left open (stdout, or yours). */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    await this.pending;
  }

  private write(text: string): Promise<void> {
    const destination = this.destination;
    if (typeof destination === 'object' && 'file' in destination) return appendFile(destination.file, text, 'utf8');
    const stream = destination === 'stdout' ? process.stdout : destination === 'stderr' ? process.stderr : destination;
    // Writing to an ended stream would also emit 'error' on it, which may crash a host without a listener.
    if (stream.writableEnded === true || stream.destroyed === true) {
      return Promise.reject(new Error('the log destination stream is closed'));
    }
    return new Promise<void>((resolve, reject) => {
      stream.write(text, (error) => (error ? reject(error) : resolve()));
    });
  }
}

function isDestination(value: unknown): value is LogDestination {
  if (value === 'stdout' || value === 'stderr') return true;
  if (typeof value !== 'object' || value === null) return false;
  if ('file' in value) return typeof value.file === 'string' && value.file !== '';
  return 'write' in value && typeof value.write === 'function';
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
