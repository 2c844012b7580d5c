import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { DeclaredFamily } from '../views/declared-families';
import { collectedFamilies, targetInfoFamily } from './exposition/collected-families';
import { exposedFamilies } from './exposition/exposed-families';
import type { ExpositionFormat } from './exposition/exposition-text';
import { writeText } from './exposition/text-writer';

export interface SerializeOptions {
  readonly format?: ExpositionFormat;
  /** Add the `target_info` family built from the resource (off: vLLM has none). */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_name` / `otel_scope_version` labels (off: vLLM has none). */
  readonly withScopeLabels?: boolean;
  /** Print `_created` companions of counters and histograms, valued with each point's start time. Default off. */
  readonly createdSeries?: boolean;
}

/**
 * Collected metrics (any reader's `collect()`) in the byte shape of vLLM's `/metrics` (Python
 * prometheus_client), written by the same writer as every exposition of the package: declared
 * families first, in declaration order, then anything else collected.
 */
export function serializePrometheus(resourceMetrics: ResourceMetrics, declared: readonly DeclaredFamily[], options: SerializeOptions = {}): string {
  const targetInfo = options.withTargetInfo === true ? targetInfoFamily(resourceMetrics.resource) : undefined;
  const families = exposedFamilies({ targetInfo, own: [], application: collectedFamilies(resourceMetrics, declared, options.withScopeLabels === true) });
  return writeText(families, { format: options.format ?? 'text', createdSeries: options.createdSeries === true });
}
