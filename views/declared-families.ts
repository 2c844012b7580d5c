import type { Attributes } from '@opentelemetry/api';
import type { ResolvedCatalog } from './catalog/catalog';
import type { FamilyType } from './catalog/family-definition';
import { streamNameFor, type NamingScheme } from './views';

/** A family the exposition must announce even before it has samples (HELP/TYPE with no series). */
export interface DeclaredFamily {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  readonly buckets?: readonly number[];
  /** A label set printed with zero values while no sample carries it (the cluster aggregate before any worker reports). */
  readonly eagerAttributes?: Attributes;
  /** The SDK stream name when it differs from `name` (the `otel` naming scheme): folded into this family. */
  readonly streamName?: string;
  /** A counter or histogram printed without `_created`, as the upstream client prints it. */
  readonly omitCreated?: boolean;
}

/**
 * HELP/TYPE for every registered family and the zero series of the eager pipeline families, for
 * an exposition of collected streams that may not have reported yet (the cluster aggregate).
 */
export function declaredFamilies(catalog: ResolvedCatalog, modelName: string, naming: NamingScheme = 'vllm'): DeclaredFamily[] {
  return catalog.families.map((family) => ({
    streamName: streamNameFor(family, naming),
    name: family.name,
    type: family.type,
    help: family.help,
    buckets: family.buckets,
    eagerAttributes: family.eager ? { model_name: modelName } : undefined,
    ...(family.omitCreated === true ? { omitCreated: true } : {}),
  }));
}
