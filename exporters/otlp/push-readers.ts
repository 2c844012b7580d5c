import { ConsoleMetricExporter, PeriodicExportingMetricReader, type MetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { redactedUrlText } from '../../views/common/redaction';
import { OmniMetricProducer, type MetricProducerOptions } from '../../views/store/metric-producer';
import type { SeriesStore } from '../../views/store/series-store';
import { reportingFailures } from './export-failures';
import type { ExportSettings } from './export-settings';
import { createOtlpMetricExporter, temporalitySelector, type ModuleLoader } from './otlp-metric-exporter';
import { lastExportOnShutdown } from './retry-after';

/**
 * One periodic reader per push exporter in the settings (`otlp`, `console`), on the settled
 * interval and timeout, each with its own producer of `store` at the exporter's temporality.
 * The Prometheus side is pull-based and is not built here. `newProducer` builds those producers
 * (default: a plain `OmniMetricProducer`; `enginePull` passes one that adds the pulled engines).
 */
export function createPushReaders(
  settings: ExportSettings,
  store?: SeriesStore,
  load?: ModuleLoader,
  newProducer?: (options: MetricProducerOptions) => OmniMetricProducer,
): MetricReader[] {
  const exporters: PushMetricExporter[] = [];
  if (settings.exporters.has('otlp')) {
    const destination = `OTLP ${settings.otlp.protocol} ${settings.otlp.url === undefined ? '(default endpoint)' : redactedUrlText(settings.otlp.url)}`;
    exporters.push(reportingFailures(createOtlpMetricExporter(settings.otlp, load), destination, settings.otlp.temporality));
  }
  if (settings.exporters.has('console')) exporters.push(new ConsoleMetricExporter({ temporalitySelector: temporalitySelector(settings.otlp.temporality) }));
  return exporters.map((exporter) =>
    lastExportOnShutdown(
      new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: settings.exportIntervalMillis,
        exportTimeoutMillis: settings.exportTimeoutMillis,
        metricProducers: store ? [storeProducerFor(store, exporter, newProducer)] : [],
      }),
      exporter,
    ),
  );
}

/** A producer of `store` at the temporality `exporter` asks for (cumulative when it does not say). */
export function storeProducerFor(
  store: SeriesStore,
  exporter: PushMetricExporter,
  newProducer: (options: MetricProducerOptions) => OmniMetricProducer = (options) => new OmniMetricProducer(options),
): OmniMetricProducer {
  return newProducer({ store, aggregationTemporalitySelector: exporter.selectAggregationTemporality?.bind(exporter) });
}
