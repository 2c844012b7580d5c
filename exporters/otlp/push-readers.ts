import { ConsoleMetricExporter, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import type { ExportSettings } from './export-settings';
import { createOtlpMetricExporter, temporalitySelector, type ModuleLoader } from './otlp-metric-exporter';

/**
 * One periodic reader per push exporter in the settings (`otlp`, `console`), on the settled
 * interval and timeout. The Prometheus side is pull-based and is not built here.
 */
export function createPushReaders(settings: ExportSettings, load?: ModuleLoader): MetricReader[] {
  const readers: MetricReader[] = [];
  const periodic = { exportIntervalMillis: settings.exportIntervalMillis, exportTimeoutMillis: settings.exportTimeoutMillis };
  if (settings.exporters.has('otlp')) {
    readers.push(new PeriodicExportingMetricReader({ ...periodic, exporter: createOtlpMetricExporter(settings.otlp, load) }));
  }
  if (settings.exporters.has('console')) {
    const exporter = new ConsoleMetricExporter({ temporalitySelector: temporalitySelector(settings.otlp.temporality) });
    readers.push(new PeriodicExportingMetricReader({ ...periodic, exporter }));
  }
  return readers;
}
