import { AggregationType, type ViewOptions } from '@opentelemetry/sdk-metrics';
import type { ResolvedCatalog, ResolvedFamily } from './catalog/catalog';
import { EngineRelabelProcessor } from './engine-relabel-processor';
import type { StageReplicaMap } from './stage-replica-map';

/** The instrumentation scope of the catalog's families: the producer's scope, and the meter the views select. */
export const OMNI_METER_NAME = 'omni-otel-metrics';

/** The package version, as the instrumentation scope's version. */
export const PACKAGE_VERSION = '0.1.0';

/**
 * How stream names leave the SDK.
 * - `vllm`: the exposed Prometheus names (colons, `_total` on counters) and no units, so that a
 *   collector's Prometheus translation prints them exactly as vLLM does.
 * - `otel`: the instrument names (dots instead of colons) with UCUM units.
 */
export type NamingScheme = 'vllm' | 'otel';
export const NAMING_SCHEMES: readonly NamingScheme[] = ['vllm', 'otel'];

export interface OmniViewsOptions {
  readonly naming?: NamingScheme;
  /** Needed to rewrite `engine` into `stage` + `replica` on upstream families. */
  readonly stageReplicaMap?: StageReplicaMap;
  /** Series per stream before the SDK folds the rest into one overflow series (SDK default 2000). */
  readonly cardinalityLimit?: number;
}

/**
 * One view per catalog family: the exposed name, HELP as description, the family's buckets, and
 * the engine relabel processor on upstream families, for instruments on the package's meter. The
 * package's own families do not need them (they live in the series store, named and bucketed by
 * the same catalog); they shape instruments you create yourself under the catalog's names.
 */
export function createOmniViews(catalog: ResolvedCatalog, options: OmniViewsOptions = {}): ViewOptions[] {
  const naming = options.naming ?? 'vllm';
  const relabel = options.stageReplicaMap ? new EngineRelabelProcessor(options.stageReplicaMap) : undefined;
  return catalog.families.map((family) => {
    const view: {
      -readonly [K in keyof ViewOptions]: ViewOptions[K];
    } = {
      meterName: OMNI_METER_NAME,
      instrumentName: family.instrumentName,
      description: family.help,
    };
    view.name = streamNameFor(family, naming);
    if (family.type === 'histogram') {
      view.aggregation = {
        type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM,
        // min/max have no Prometheus sample; skipping them saves work on every record.
        options: { boundaries: [...(family.buckets ?? [])], recordMinMax: false },
      };
    }
    if (relabel && family.engineLabel) view.attributesProcessors = [relabel];
    if (options.cardinalityLimit !== undefined) view.aggregationCardinalityLimit = options.cardinalityLimit;
    return view;
  });
}

/** The name readers see for a family under a naming scheme. */
export function streamNameFor(family: ResolvedFamily, naming: NamingScheme): string {
  return naming === 'vllm' ? family.name : family.otelName;
}
