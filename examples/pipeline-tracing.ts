import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface PipelineTracingOptions {
  /** Where finished spans go: an OTLP exporter to a collector, or an `InMemorySpanExporter` a test reads. */
  readonly exporter: SpanExporter;
  /** `batch` (default) exports spans in the background; `simple` exports each span as it ends, so a reader sees it at once. */
  readonly processor?: 'batch' | 'simple';
}

export interface PipelineTracing {
  /** The tracer the API server opens its request spans with. */
  readonly tracer: Tracer;
  /** Flushes and stops the exporter, then unregisters the globals this registered. Idempotent. */
  shutdown(): Promise<void>;
}

/** The name the pipeline's spans are recorded under (their instrumentation scope). */
export const PIPELINE_TRACER_NAME = 'omni-reference-pipeline';

/**
 * Registers the OpenTelemetry trace SDK globally: an async-hooks context manager (so the span of a
 * request stays active across its awaits), the W3C trace-context propagator (`traceparent`), and a
 * tracer provider exporting to `exporter`. Registered before the metrics are, so exemplars default
 * on. Refuses to start beside a tracer provider or context manager someone else registered, since
 * the pipeline could not unregister it on stop.
 */
export function startPipelineTracing(options: PipelineTracingOptions): PipelineTracing {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(contextManager)) {
    contextManager.disable();
    throw new Error('tracing: a context manager is already registered globally; start the pipeline without `tracing` and trace it yourself');
  }
  const processor = options.processor === 'simple' ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(options.exporter);
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  if (!trace.setGlobalTracerProvider(provider)) {
    context.disable();
    throw new Error('tracing: a tracer provider is already registered globally; start the pipeline without `tracing` and trace it yourself');
  }
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  let stopping: Promise<void> | undefined;
  return {
    tracer: provider.getTracer(PIPELINE_TRACER_NAME),
    shutdown: () =>
      (stopping ??= provider.shutdown().finally(() => {
        trace.disable();
        propagation.disable();
        context.disable();
      })),
  };
}
