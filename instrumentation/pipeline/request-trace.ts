import { context, isSpanContextValid, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { ownedExemplarTrace, type ExemplarTrace } from '../../views/store/exemplar-trace-ids';

/**
 * The trace a served request belongs to, read when the host calls `generate`: the span active
 * there (the host's server span, when it traces), else the W3C `traceparent` the request object
 * carries (a host that forwards its client's header without tracing itself). Only sampled traces
 * count: an exemplar must point at a trace the backend keeps. The ids are copied (lowercased), so
 * the request's records keep neither the header they were cut from nor an object someone may
 * change later. Reading the request is the host's object: a getter that throws is left to the
 * caller's guard.
 */
export function requestTraceOf(request: unknown): ExemplarTrace | undefined {
  const active = trace.getSpanContext(context.active());
  if (active !== undefined && isSpanContextValid(active)) return sampled(active);
  const traceparent = (request as { readonly traceparent?: unknown } | undefined)?.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  // The propagator's own parser: version, lengths, all-zero ids and flags are checked as it checks them.
  const parsed = parseTraceParent(traceparent);
  return parsed === null ? undefined : sampled(parsed);
}

/** The sampled span active where the host called (an engine loop traced per step), if any. */
export function activeTrace(): ExemplarTrace | undefined {
  const active = trace.getSpanContext(context.active());
  return active !== undefined && isSpanContextValid(active) ? sampled(active) : undefined;
}

function sampled(spanContext: SpanContext): ExemplarTrace | undefined {
  return (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? ownedExemplarTrace(spanContext) : undefined;
}
