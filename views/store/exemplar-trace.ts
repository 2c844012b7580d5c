import { ProxyTracerProvider, trace } from '@opentelemetry/api';

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
