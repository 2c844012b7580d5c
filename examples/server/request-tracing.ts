import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { RequestHandler } from './openai-handler';

/**
 * Serves each request inside a server span, child of the caller's `traceparent` when it sends one.
 * The span is active while the handler runs (and across its awaits), so the metrics recorded for
 * the request name its trace; it ends when the response closes, finished or cut off.
 */
export function traceRequests(handler: RequestHandler, tracer: Tracer): RequestHandler {
  return (request, response) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const method = request.method ?? 'GET';
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const span = tracer.startSpan(`${method} ${path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
    response.once('close', () => {
      span.setAttribute('http.response.status_code', response.statusCode);
      if (response.statusCode >= 500 || !response.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => handler(request, response));
  };
}
