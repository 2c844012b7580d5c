import { ExportResultCode } from '@opentelemetry/core';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { LimitedWarning } from '../../views/common/diag-warnings';
import { withUrlsRedacted } from '../../views/common/redaction';
import { pausedByCollector } from './retry-after';
import type { TemporalityPreference } from './types';

/**
 * What a failed export costs, by temporality: a cumulative point carries the totals since the
 * start, so the next export that gets through makes up for this one; a delta point carries only the
 * change since the previous export, which is lost with it (`lowmemory`: counters' and histograms').
 */
const LOSS: Readonly<Record<TemporalityPreference, string>> = {
  cumulative: 'the next export that gets through carries the totals (cumulative temporality)',
  delta: 'the increments of this export are lost (delta temporality)',
  lowmemory: 'the counter and histogram increments of this export are lost (lowmemory temporality)',
};

/**
 * `exporter`, whose failed exports are reported through the package's diagnostics (heard on the
 * console when the application installed no diag logger), at most one warning a minute with the
 * count of the failures in between: a collector that is down for an hour is a few lines, not one
 * per export. The periodic reader only hands failures to the global error handler, which is
 * silent without a diag logger. `destination` is printed as given (redact it first); the failure's
 * own message is redacted here.
 */
export function reportingFailures<T extends PushMetricExporter>(
  exporter: T,
  destination: string,
  temporality: TemporalityPreference,
  warning = new LimitedWarning(),
): T {
  const exportBatch = exporter.export.bind(exporter);
  exporter.export = (metrics, resultCallback) => {
    exportBatch(metrics, (result) => {
      // A failure the collector explained with Retry-After is reported by the pause's own warning.
      if (result.code !== ExportResultCode.SUCCESS && !pausedByCollector(exporter)) {
        const reason = withUrlsRedacted(result.error?.message ?? 'no reason given');
        warning.warn(`metrics export to ${destination} failed (${reason}); ${LOSS[temporality]}`);
      }
      resultCallback(result);
    });
  };
  return exporter;
}
