import type { PipelineFamilyKey } from './pipeline-families';

/**
 * The pipeline families that take per-request labels (a tenant, a priority class) when the
 * `requestLabels` option names some: what a per-tenant SLO is computed from — completions and
 * failures, end-to-end latency, audio time to first packet, queue wait, token totals, and the
 * goodput counters of the `slo` option. The labels follow the family's own, in the order the
 * option lists them.
 */
export const REQUEST_LABEL_FAMILIES: readonly PipelineFamilyKey[] = [
  'requestsSuccess',
  'requestsFailed',
  'e2eRequestLatency',
  'audioTtfp',
  'requestQueueWait',
  'promptTokens',
  'generationTokens',
  'requestsGood',
  'sloMisses',
];

/** At most this many request labels: each multiplies a family's series. */
export const MAX_REQUEST_LABELS = 2;

/** Label names a request label may not take: the request families' own, and those the exposition reserves. */
export const RESERVED_REQUEST_LABEL_NAMES: readonly string[] = [
  'model_name',
  'finished_reason',
  'reason',
  'stage',
  'replica',
  'le',
  'quantile',
  'otel_metric_overflow',
  'otel_scope_name',
  'otel_scope_version',
  'job',
  'instance',
];
