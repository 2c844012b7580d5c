import { build125Buckets } from './buckets';
import { shownForHiddenVersion } from './hidden-metrics';
import type { FamilyDefinition, FamilyGroup, FamilyType } from './family-definition';
import { DEFAULT_PIPELINE_PREFIX, exposedName, instrumentNameFor, otelNameFor, PIPELINE_PREFIXES, type PipelinePrefix } from './names';
import { PIPELINE_FAMILIES, type PipelineFamilyKey } from './pipeline-families';
import { findPrintedNameClash } from './printed-names';
import { REQUEST_LABEL_FAMILIES } from './request-label-families';
import { PROCESS_FAMILIES, type ProcessFamilyKey } from './process-families';
import { UPSTREAM_FAMILIES, type UpstreamFamilyKey } from './upstream-families';
import { checkObject, optionKeys, shown } from '../common/option-checks';

/** Optional vLLM features whose families vLLM registers only when the feature is configured. */
export interface FeatureOptions {
  /** Speculative decoding; per-position counters are created for positions 0..numSpeculativeTokens-1. */
  readonly specDecode?: { readonly numSpeculativeTokens: number };
  /**
   * KV connector whose Prometheus families are registered (vLLM: `--kv-transfer-config` with
   * NixlConnector, OffloadingConnector or SimpleCPUOffloadConnector).
   */
  readonly kvConnector?: 'nixl' | 'offloading' | 'simple-cpu-offload';
  /** LoRA serving (vLLM: `lora_config`); `maxLoras` is the `max_lora` label value. */
  readonly lora?: { readonly maxLoras: number };
  /** Sampled KV-block residency histograms (vLLM: `--kv-cache-metrics`). */
  readonly kvCacheMetrics?: boolean;
  /** Requests with NaNs in logits (vLLM: `VLLM_COMPUTE_NANS_IN_LOGITS`). */
  readonly corruptedRequests?: boolean;
}

/** The KV connectors whose families the catalog knows. */
export type KvConnectorKind = NonNullable<FeatureOptions['kvConnector']>;
export const KV_CONNECTOR_KINDS: readonly KvConnectorKind[] = ['nixl', 'offloading', 'simple-cpu-offload'];

/** The catalog group each KV connector registers. */
const KV_CONNECTOR_GROUPS: Readonly<Record<KvConnectorKind, FamilyGroup>> = {
  nixl: 'kvConnector',
  offloading: 'kvOffload',
  'simple-cpu-offload': 'simpleKvOffload',
};

export interface CatalogOptions {
  /** Upstream `--log-stats`: off declares only the pipeline families; on registers upstream families too. */
  readonly logStats?: boolean;
  readonly prefix?: PipelinePrefix;
  /** Drives the 1-2-5 token buckets, as vLLM's `max_model_len` does. Default 4096. */
  readonly maxModelLen?: number;
  readonly features?: FeatureOptions;
  /** Every deprecated upstream name the package knows, whichever vLLM release deleted it. */
  readonly showHiddenMetrics?: boolean;
  /** vLLM's `--show-hidden-metrics-for-version`: the hidden families the matched vLLM release still prints for it. */
  readonly showHiddenMetricsForVersion?: string;
  /** Bucket overrides by exposed family name (histograms only). */
  readonly buckets?: Readonly<Record<string, readonly number[]>>;
  /** Extra families, already validated (see `loadMetricsConfig`). */
  readonly customFamilies?: readonly CustomFamily[];
  /**
   * The `process_*` and `nodejs_*` families, first in the exposition as in a Python vLLM's; a
   * process collector reads their values at collection time. Default off here.
   */
  readonly processMetrics?: boolean;
  /** Stage names are known (the `stageNames` option): registers the stage-name info family, whatever `logStats` says. */
  readonly stageNames?: boolean;
  /** The `slo` option declares objectives: registers the goodput counters, whatever `logStats` says. */
  readonly slo?: boolean;
  /** Every group at once, whatever the features say (docs and generated tests). */
  readonly everyGroup?: boolean;
  /**
   * Per-request label names (`tenant`, `priority`) appended to the request families' labels; their
   * series are bound lazily, per value, so those families lose their eager zero series. Default none.
   */
  readonly requestLabels?: readonly string[];
}

const CATALOG_OPTION_KEYS = optionKeys<CatalogOptions>({
  logStats: true,
  prefix: true,
  maxModelLen: true,
  features: true,
  showHiddenMetrics: true,
  showHiddenMetricsForVersion: true,
  buckets: true,
  customFamilies: true,
  processMetrics: true,
  stageNames: true,
  slo: true,
  everyGroup: true,
  requestLabels: true,
});

/** A user family from the config file; `name` is the exposed name. */
export interface CustomFamily {
  /** The name as written in the config file; a counter's is exposed with `_total` appended when it does not end in it. */
  readonly name: string;
  /** The family's type: a lookup (`custom.counter()`, `gauge()`, `histogram()`) must ask for the same one. */
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** The HELP text. */
  readonly help: string;
  /** Declared label names, in order; `model_name` among them is filled in by the recorder. */
  readonly labels: readonly string[];
  /** Bucket bounds, finite and strictly increasing: required for a histogram, refused for the other types. */
  readonly buckets?: readonly number[];
  /** The values' unit (`s`, `By`, …); none when absent. */
  readonly unit?: string;
}

export type FamilyKey = `pipeline.${PipelineFamilyKey}` | `upstream.${UpstreamFamilyKey}` | `process.${ProcessFamilyKey}` | `custom.${string}`;

/** A family with its name, labels and buckets settled for one configuration. */
export interface ResolvedFamily {
  readonly key: FamilyKey;
  /** Exposed name (counters end in `_total`). */
  readonly name: string;
  /** OpenTelemetry instrument name (no colons). */
  readonly instrumentName: string;
  /** Stream name under the `otel` naming scheme (instrument name without its unit token). */
  readonly otelName: string;
  readonly type: FamilyType;
  readonly help: string;
  /** Exposed label names, `le` excluded; `engine` already replaced by `stage`, `replica`. */
  readonly labels: readonly string[];
  readonly buckets?: readonly number[];
  readonly unit: string;
  readonly group: FamilyGroup;
  /** The upstream family carries vLLM's `engine` label, so the relabel processor applies. */
  readonly engineLabel: boolean;
  readonly info: boolean;
  readonly eager: boolean;
  readonly deprecatedFor?: string;
  /** A counter or histogram without `_created` (the process families, as the clients print them). */
  readonly omitCreated?: boolean;
  readonly clusterMerge?: 'sum' | 'max' | 'min';
}

export interface ResolvedCatalog {
  readonly prefix: PipelinePrefix;
  readonly families: readonly ResolvedFamily[];
  byKey(key: FamilyKey): ResolvedFamily | undefined;
  byName(name: string): ResolvedFamily | undefined;
}

export const DEFAULT_MAX_MODEL_LEN = 4096;

/** Settles the catalog for one configuration: which families are registered, and their exact shape. */
export function resolveCatalog(options: CatalogOptions = {}): ResolvedCatalog {
  checkObject(options, 'catalog', CATALOG_OPTION_KEYS);
  const prefix = options.prefix ?? DEFAULT_PIPELINE_PREFIX;
  if (!PIPELINE_PREFIXES.includes(prefix)) {
    throw new RangeError(`prefix must be one of ${PIPELINE_PREFIXES.join(', ')}; got ${shown(prefix)}`);
  }
  const requestTokenBuckets = build125Buckets(options.maxModelLen ?? DEFAULT_MAX_MODEL_LEN);
  const enabled = enabledGroups(options);
  const families: ResolvedFamily[] = [];
  const requestLabels = options.requestLabels ?? [];
  const labelledKeys = new Set<FamilyKey>(requestLabels.length === 0 ? [] : REQUEST_LABEL_FAMILIES.map((key) => `pipeline.${key}` as const));

  const hiddenFor = options.logStats ? options.showHiddenMetricsForVersion : undefined;
  const add = (key: FamilyKey, namePrefix: string, def: FamilyDefinition): void => {
    if (!enabled.has(def.group) && !(def.group === 'hidden' && hiddenFor !== undefined && shownForHiddenVersion(def, hiddenFor))) return;
    const labelled = labelledKeys.has(key);
    const name = exposedName(namePrefix, def.baseName, def.type);
    const instrumentName = instrumentNameFor(namePrefix, def.baseName);
    const defaultBuckets = def.buckets === 'request_tokens' ? requestTokenBuckets : def.buckets;
    families.push({
      key,
      name,
      instrumentName,
      otelName: otelNameFor(instrumentName, def.unit),
      type: def.type,
      help: def.help,
      labels: [...def.labels.flatMap((label) => (label === 'engine' ? ['stage', 'replica'] : [label])), ...(labelled ? requestLabels : [])],
      buckets: def.type === 'histogram' ? [...(options.buckets?.[name] ?? defaultBuckets ?? [])] : undefined,
      unit: def.unit,
      group: def.group,
      engineLabel: def.labels.includes('engine'),
      info: def.info === true,
      eager: def.eager === true && !labelled,
      deprecatedFor: def.deprecatedFor,
      ...(def.omitCreated === true ? { omitCreated: true } : {}),
      ...(def.clusterMerge === undefined ? {} : { clusterMerge: def.clusterMerge }),
    });
  };

  for (const [key, def] of Object.entries(PROCESS_FAMILIES)) add(`process.${key as ProcessFamilyKey}`, '', def);
  for (const [key, def] of Object.entries(PIPELINE_FAMILIES)) add(`pipeline.${key as PipelineFamilyKey}`, prefix, def);
  for (const [key, def] of Object.entries(UPSTREAM_FAMILIES)) add(`upstream.${key as UpstreamFamilyKey}`, 'vllm:', def);
  for (const custom of options.customFamilies ?? []) {
    add(`custom.${custom.name}`, '', {
      baseName: customBaseName(custom),
      type: custom.type,
      help: custom.help,
      labels: custom.labels,
      buckets: custom.buckets,
      unit: custom.unit ?? '',
      group: 'custom',
    });
  }

  assertUniqueNames(families);
  const keyIndex = new Map(families.map((f) => [f.key, f] as const));
  const nameIndex = new Map(families.map((f) => [f.name, f] as const));
  return {
    prefix,
    families,
    byKey: (key) => keyIndex.get(key),
    byName: (name) => nameIndex.get(name),
  };
}

function enabledGroups(options: CatalogOptions): Set<FamilyGroup> {
  const groups = new Set<FamilyGroup>(['pipeline', 'custom']);
  if (options.processMetrics) groups.add('process');
  if (options.stageNames || options.everyGroup) groups.add('stageNames');
  if (options.slo || options.everyGroup) groups.add('slo');
  if (!options.logStats) return groups;
  const features = options.features ?? {};
  groups.add('core');
  if (features.specDecode) groups.add('specDecode');
  if (features.kvConnector) groups.add(KV_CONNECTOR_GROUPS[features.kvConnector]);
  if (features.lora) groups.add('lora');
  if (features.kvCacheMetrics) groups.add('kvCacheResidency');
  if (features.corruptedRequests) groups.add('corruptedRequests');
  if (options.showHiddenMetrics) groups.add('hidden');
  if (options.everyGroup) for (const group of Object.values(KV_CONNECTOR_GROUPS)) groups.add(group);
  return groups;
}

/** A custom family's name without the `_total` the exposition adds to every counter. */
function customBaseName(custom: CustomFamily): string {
  return custom.type === 'counter' ? custom.name.replace(/_total$/, '') : custom.name;
}

/** The name a custom family is exposed under (a counter's ends in `_total`). */
export function customExposedName(custom: CustomFamily): string {
  return exposedName('', customBaseName(custom), custom.type);
}

/** Refuses two families that would print a common sample or metadata name (an exact duplicate included). */
function assertUniqueNames(families: readonly ResolvedFamily[]): void {
  const clash = findPrintedNameClash(families.map((family) => ({ name: family.name, kind: family.type })));
  if (clash !== undefined) {
    throw new Error(
      `metric families ${clash.first.name} (${clash.first.kind}) and ${clash.second.name} (${clash.second.kind}) both print ${clash.printedName}`,
    );
  }
}

/** Every family the package knows, whatever the configuration (docs and generated tests). */
export function resolveFullCatalog(options: Pick<CatalogOptions, 'prefix' | 'maxModelLen'> = {}): ResolvedCatalog {
  return resolveCatalog({
    ...options,
    logStats: true,
    showHiddenMetrics: true,
    processMetrics: true,
    everyGroup: true,
    features: {
      specDecode: { numSpeculativeTokens: 1 },
      kvConnector: 'nixl',
      lora: { maxLoras: 1 },
      kvCacheMetrics: true,
      corruptedRequests: true,
    },
  });
}
