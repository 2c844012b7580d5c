/** The Prometheus protobuf exposition: length-delimited `io.prometheus.client.MetricFamily` messages. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

/**
 * Whether a scraper's `Accept` prefers the Prometheus protobuf exposition
 * (`application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited`)
 * to every text format it accepts, by `q`. A Prometheus with native histograms enabled asks
 * `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,application/openmetrics-text;version=1.0.0;q=0.5,…`;
 * one without asks for text only, and keeps getting it.
 */
export function prefersProtobuf(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let protobuf = 0;
  let other = 0;
  for (const entry of accept.split(',')) {
    const [type = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const parameter = (name: string): string | undefined => parameters.find((one) => one.startsWith(`${name}=`))?.slice(name.length + 1);
    const quality = parameter('q');
    const q = quality === undefined ? 1 : Number(quality);
    if (!(q >= 0 && q <= 1)) continue;
    if (type === 'application/vnd.google.protobuf') {
      if (parameter('proto') === 'io.prometheus.client.metricfamily' && parameter('encoding') === 'delimited') protobuf = Math.max(protobuf, q);
    } else if (type === 'application/openmetrics-text' || type === 'text/plain' || type === 'text/*' || type === '*/*') other = Math.max(other, q);
  }
  return protobuf > 0 && protobuf >= other;
}
