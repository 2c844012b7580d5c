import { TraceFlags, type SpanContext } from '@opentelemetry/api';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * The trace an exemplar points at, as the exposition prints it: W3C trace context ids (32 and 16
 * lowercase hex digits, not all zero), in strings of its own. A span context is the tracer's or
 * the host's object: its ids may be uppercase (a foreign propagator), slices of a header that
 * stays alive as long as they do (a `traceparent` of a future version may carry megabytes after
 * them), or replaced after the record. Frozen, so what was checked is what is printed.
 */
export class ExemplarTrace implements SpanContext {
  readonly traceFlags = TraceFlags.SAMPLED;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
  ) {
    Object.freeze(this);
  }
}

/** The last trace made, for the records of one span that follow each other (no new strings for them). */
let last: ExemplarTrace | undefined;

/**
 * The exemplar trace of `spanContext`, or undefined when its ids are not W3C ids. Reads each id
 * once and copies it (lowercased), so nothing it keeps refers to the caller's strings. Never throws:
 * a span context's getters are someone else's code.
 */
export function ownedExemplarTrace(spanContext: SpanContext): ExemplarTrace | undefined {
  if (spanContext instanceof ExemplarTrace) return spanContext;
  try {
    const traceId: unknown = spanContext.traceId;
    const spanId: unknown = spanContext.spanId;
    if (last !== undefined && traceId === last.traceId && spanId === last.spanId) return last;
    // Lengths first: a huge id is refused before anything is copied.
    if (typeof traceId !== 'string' || typeof spanId !== 'string' || traceId.length !== 32 || spanId.length !== 16) return undefined;
    const trace = new ExemplarTrace(ownedLowercase(traceId), ownedLowercase(spanId));
    if (!isPrintableTrace(trace)) return undefined;
    last = trace;
    return trace;
  } catch {
    return undefined;
  }
}

/** Whether an exemplar may print these ids: checked again where it is printed, whatever the trace went through. */
export function isPrintableTrace(trace: { readonly traceId: unknown; readonly spanId: unknown }): boolean {
  const { traceId, spanId } = trace;
  return (
    typeof traceId === 'string' &&
    typeof spanId === 'string' &&
    TRACE_ID.test(traceId) &&
    SPAN_ID.test(spanId) &&
    traceId !== ZERO_TRACE_ID &&
    spanId !== ZERO_SPAN_ID
  );
}

/**
 * A new flat string with the id's characters, lowercased. `toLowerCase` and `slice` may hand back
 * the string they were given, or a view into it; a round trip through bytes cannot.
 */
function ownedLowercase(id: string): string {
  return Buffer.from(id.toLowerCase(), 'latin1').toString('latin1');
}
