import type { OmniPrometheusReader } from './exporters/prometheus-reader';
import type { OmniSettings } from './settings';

/**
 * Features a reader of this configuration cannot carry, each said once at startup with what the
 * reader gets instead and the way to the full data. Nothing here is lost data: native histograms
 * keep their classic buckets in every format; the lines say where the finer data does not go.
 */
export function uncarriedFeatures(settings: OmniSettings, reader: OmniPrometheusReader | undefined): string[] {
  const lines: string[] = [];
  const native = settings.nativeHistograms !== undefined;
  if (reader !== undefined && reader.expositionChoice === 'text') {
    if (native) {
      lines.push(
        "omni-otel-metrics: nativeHistograms with prometheus.exposition 'text': /metrics serves the 0.0.4 text only, so scrapers get the classic buckets (OTLP and metric producers still carry the exponential points). Use exposition 'negotiate' (the default) to offer the protobuf exposition.",
      );
    }
    if (settings.exemplars === true) {
      lines.push(
        "omni-otel-metrics: exemplars with prometheus.exposition 'text': only OpenMetrics carries exemplars, so /metrics serves none. Use exposition 'negotiate' (the default).",
      );
    }
  }
  const { exporters } = settings.exportSettings;
  if (settings.exemplars === true && settings.provider.kind === 'own' && (exporters.has('otlp') || exporters.has('console'))) {
    lines.push(`omni-otel-metrics: ${EXEMPLARS_NOT_PRODUCED}`);
  }
  return lines;
}

/** Exemplars never reach an OpenTelemetry reader: said for the push exporters, and for producers of your own. */
export const EXEMPLARS_NOT_PRODUCED =
  "exemplars and OpenTelemetry readers: the SDK's data points have no exemplar field, so OTLP, console, log lines and readers given an OmniMetricProducer carry none. Scrape /metrics (OpenMetrics or protobuf) for them.";
