import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * A span exporter that says when its exports fail: the OTLP exporter only reports through
 * OpenTelemetry's diag logger, which a demo run does not install, so with no collector listening
 * every span would be dropped without a word. Warns once per failing spell (the first failure
 * after a success, or ever), naming where the spans were going.
 */
export function warnOnExportFailure(exporter: SpanExporter, destination: string, warn: (line: string) => void = console.warn): SpanExporter {
  let failing = false;
  return {
    export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) failing = false;
        else if (!failing) {
          failing = true;
          const reason = result.error?.message ?? 'no reason given';
          warn(`tracing: exporting ${spans.length} span(s) to ${destination} failed (${reason}); spans are dropped until an export succeeds`);
        }
        resultCallback(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
