import { ExportResultCode } from '@opentelemetry/core';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { LimitedWarning } from '../../views/diag-warnings';
import { pausedByCollector } from './retry-after';

/**
 * `exporter`, whose failed exports are reported through the package's diagnostics (heard on the
 * console when the application installed no diag logger), at most one warning a minute with the
 * count of the failures in between: a collector that is down for an hour is a few lines, not one
 * per export. The periodic reader only hands failures to the global error handler, which is
 * silent without a diag logger.
 */
export function reportingFailures<T extends PushMetricExporter>(exporter: T, destination: string, warning = new LimitedWarning()): T {
  const exportBatch = exporter.export.bind(exporter);
  exporter.export = (metrics, resultCallback) => {
    exportBatch(metrics, (result) => {
      // A failure the collector explained with Retry-After is reported by the pause's own warning.
      if (result.code !== ExportResultCode.SUCCESS && !pausedByCollector(exporter)) {
        const reason = result.error?.message ?? 'no reason given';
        warning.warn(`metrics export to ${destination} failed (${reason}); the data of this export is lost`);
      }
      resultCallback(result);
    });
  };
  return exporter;
}
