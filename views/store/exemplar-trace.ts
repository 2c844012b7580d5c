import { context, isSpanContextValid, ProxyTracerProvider, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';

/**
 * The trace an exemplar is taken from. Engine-side and serving-side records happen outside the
 * request's own asynchronous context (an engine poll serves many requests at once), so whoever
 * knows which request a record belongs to names its trace for the duration of the calls that
 * record it; otherwise the OpenTelemetry context active where the record runs is used.
 */
let requestTrace: SpanContext | undefined;

/** Names the trace of the request whose values are recorded until `leaveRequestTrace(previous)`; returns the one it replaces. */
export function enterRequestTrace(spanContext: SpanContext | undefined): SpanContext | undefined {
  const previous = requestTrace;
  requestTrace = spanContext;
  return previous;
}

export function leaveRequestTrace(previous: SpanContext | undefined): void {
  requestTrace = previous;
}

/**
 * The trace of the record being made: the request's named one, else the active span's if it is
 * sampled (an exemplar must point at a trace the backend keeps), else none.
 */
export function currentExemplarTrace(): SpanContext | undefined {
  if (requestTrace !== undefined) return requestTrace;
  const spanContext = trace.getSpanContext(context.active());
  if (spanContext === undefined || (spanContext.traceFlags & TraceFlags.SAMPLED) !== TraceFlags.SAMPLED) return undefined;
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/**
 * Whether a tracer provider other than the API's no-op one is registered globally: the
 * `exemplars` default. An unregistered global answers with the no-op provider every
 * `ProxyTracerProvider` falls back to.
 */
export function tracingRegistered(): boolean {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider)) return true;
  return provider.getDelegate() !== new ProxyTracerProvider().getDelegate();
}
