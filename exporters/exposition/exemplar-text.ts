import { formatGoFloat, pythonFloatRepr } from '../../views/common/go-float';
import type { Exemplar } from '../../views/store/exemplar-slots';

/**
 * An exemplar as the OpenMetrics exposition appends it to a bucket or `_total` sample, byte for
 * byte as prometheus_client prints one: ` # {span_id="…",trace_id="…"} <value> <timestamp>`,
 * labels sorted by name, the value as every sample value, the timestamp as Python's `str(float)`
 * of `time.time()`. The ids are W3C lowercase hex, checked where the slots hand them out
 * (`ExemplarSlots.at`), so they need no escaping, and their 63 characters of labels stay within the
 * format's 128.
 */
export function exemplarText(exemplar: Exemplar | undefined): string {
  if (exemplar === undefined) return '';
  return ` # {span_id="${exemplar.spanId}",trace_id="${exemplar.traceId}"} ${formatGoFloat(exemplar.value)} ${pythonFloatRepr(exemplar.timestampSeconds)}`;
}
