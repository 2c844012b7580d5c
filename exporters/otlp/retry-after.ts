import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from 'node:http';
import { ExportResultCode } from '@opentelemetry/core';
import type { MetricReader, PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { LimitedWarning } from '../../views/common/diag-warnings';
import type { TemporalityPreference } from './types';

/** The longest pause one answer can impose: a collector cannot silence the exporter for good. */
export const MAX_RETRY_AFTER_MILLIS = 600_000;

/** The gate of each exporter `gate()` wrapped, for the reader built around it. */
const gates = new WeakMap<PushMetricExporter, RetryAfterGate>();

/**
 * How long a collector's answer asks the exporter to wait, in milliseconds from `now`: a 429 or 503
 * with `Retry-After` in seconds (any number of digits) or as an HTTP date (RFC 9110 §10.2.3), at
 * most `MAX_RETRY_AFTER_MILLIS`. Undefined for any other answer, a missing, zero, past or
 * unreadable header.
 */
export function retryAfterMillis(status: number | undefined, header: string | readonly string[] | undefined, now: number): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const value = (typeof header === 'string' ? header : header?.[0])?.trim();
  if (value === undefined || value === '') return undefined;
  // Seconds past what a number holds exactly are still "longer than the cap".
  const millis = /^\d+$/.test(value) ? Math.min(Number(value), MAX_RETRY_AFTER_MILLIS / 1000) * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(millis) || millis <= 0) return undefined;
  return Math.min(millis, MAX_RETRY_AFTER_MILLIS);
}

/**
 * Honours a collector's `Retry-After` across exports. The OTLP exporter retries within one export
 * only while the wait fits in its timeout; a collector asking for more than that (a 429 with
 * `Retry-After: 30` against a 10 s timeout) used to get the next export at the next interval anyway.
 * After such an answer, exports before the time it names are skipped, with a rate-limited warning:
 * with cumulative temporality nothing is lost (the next export carries the totals); with delta (and
 * `lowmemory`, for counters and histograms) the increments of a skipped export are dropped, as the
 * collector would have refused them. The last export, at shutdown, is always attempted.
 */
export class RetryAfterGate {
  private notBeforeMillis = 0;
  private final = false;
  private readonly warning = new LimitedWarning();

  constructor(
    private readonly temporality: TemporalityPreference,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes one answer of the collector: a `Retry-After` moves the next export, a success clears it. */
  noteResponse(response: IncomingMessage): void {
    const status = response.statusCode;
    if (status !== undefined && status >= 200 && status < 300) {
      this.notBeforeMillis = 0;
      return;
    }
    const now = this.now();
    const wait = retryAfterMillis(status, response.headers['retry-after'], now);
    if (wait !== undefined) this.notBeforeMillis = Math.max(this.notBeforeMillis, now + wait);
  }

  /** `agent`, noting the answer to every request sent through it. */
  observe(agent: HttpAgent): HttpAgent {
    // Every ClientRequest given an agent registers itself through addRequest (Node's hook for agent
    // implementations, absent from the type definitions); the exporter's own response callback is
    // left alone, this listener only reads the status and headers.
    const hooked = agent as HttpAgent & { addRequest(request: ClientRequest, options: unknown): void };
    const addRequest = hooked.addRequest.bind(agent);
    hooked.addRequest = (request, options) => {
      request.once('response', (response: IncomingMessage) => this.noteResponse(response));
      addRequest(request, options);
    };
    return agent;
  }

  /** `exporter`, whose exports before the collector's time are skipped. */
  gate<T extends PushMetricExporter>(exporter: T): T {
    const exportBatch = exporter.export.bind(exporter);
    exporter.export = (metrics, resultCallback) => {
      const now = this.now();
      if (this.final || now >= this.notBeforeMillis) return exportBatch(metrics, resultCallback);
      const lost =
        this.temporality === 'cumulative'
          ? 'nothing is lost: the next export carries the totals'
          : `with ${this.temporality} temporality the increments of skipped exports are dropped`;
      this.warning.warn(
        `the OTLP collector asked, with Retry-After, not to be sent metrics before ${new Date(this.notBeforeMillis).toISOString()}: exports until then are skipped (${lost})`,
      );
      // Reported as done: the reader would otherwise log an error every interval for a pause the
      // collector asked for and the warning above reports.
      resultCallback({ code: ExportResultCode.SUCCESS });
    };
    gates.set(exporter, this);
    return exporter;
  }

  /** From now on every export is attempted. */
  open(): void {
    this.final = true;
  }

  /** Whether the collector's last answer asked for a pause that has not ended: a failure it explains is its own warning's. */
  get pausing(): boolean {
    return this.now() < this.notBeforeMillis;
  }
}

/** Whether the collector of `exporter` (one `gate()` wrapped) asked for a pause that is still on. */
export function pausedByCollector(exporter: PushMetricExporter): boolean {
  return gates.get(exporter)?.pausing === true;
}

/**
 * `reader`, whose shutdown attempts its last export whatever the collector of `exporter` asked:
 * nothing follows it, so skipping it would lose the last values.
 */
export function lastExportOnShutdown<T extends MetricReader>(reader: T, exporter: PushMetricExporter): T {
  const gate = gates.get(exporter);
  if (gate === undefined) return reader;
  const shutdown = reader.shutdown.bind(reader);
  reader.shutdown = (options) => {
    gate.open();
    return shutdown(options);
  };
  return reader;
}
