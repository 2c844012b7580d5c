import type { ResolvedCatalog, ResolvedFamily } from '../catalog/catalog';
import { checkArray, checkObject, OmniOptionError, optionKeys, shown } from '../common/option-checks';
import {
  DEFAULT_NATIVE_MAX_BUCKETS,
  DEFAULT_NATIVE_SCHEMA,
  DEFAULT_NATIVE_ZERO_THRESHOLD,
  MAX_NATIVE_SCHEMA,
  MIN_NATIVE_SCHEMA,
  type NativeBucketConfig,
} from './native-buckets';

/** Native (sparse exponential) histograms for some or all histogram families. */
export interface NativeHistogramOptions {
  /** Histogram families (by exposed name) that keep native buckets; default every histogram family. */
  readonly families?: readonly string[];
  /** Buckets per power of two are 2^schema, from -4 to 8; default 3 (client_golang's for a bucket factor of 1.1). */
  readonly schema?: number;
  /** Buckets a series may span before its resolution is halved; default 160. */
  readonly maxBuckets?: number;
  /** Observations of at most this magnitude count in the zero bucket; default 2^-128 (client_golang's). */
  readonly zeroThreshold?: number;
}

/** Which families keep native buckets, and how. */
export interface NativeHistogramSettings {
  readonly config: NativeBucketConfig;
  /** Exposed names of the families; undefined: every histogram family. */
  readonly families?: ReadonlySet<string>;
}

const NATIVE_HISTOGRAM_OPTION_KEYS = optionKeys<NativeHistogramOptions>({ families: true, schema: true, maxBuckets: true, zeroThreshold: true });

/**
 * The `nativeHistograms` option checked against the catalog: `true` turns them on for every
 * histogram family with the defaults; a family named that this configuration does not register as
 * a histogram is refused, as a typo would otherwise go unnoticed.
 */
export function resolveNativeHistograms(option: boolean | NativeHistogramOptions | undefined, catalog: ResolvedCatalog): NativeHistogramSettings | undefined {
  if (option === undefined || option === false) return undefined;
  const options: NativeHistogramOptions = option === true ? {} : option;
  if (typeof options !== 'object' || options === null) {
    throw new OmniOptionError('nativeHistograms', `nativeHistograms must be a boolean or an object of options; got ${shown(option)}`);
  }
  checkObject(options, 'nativeHistograms', NATIVE_HISTOGRAM_OPTION_KEYS);
  const schema = options.schema ?? DEFAULT_NATIVE_SCHEMA;
  if (!Number.isInteger(schema) || schema < MIN_NATIVE_SCHEMA || schema > MAX_NATIVE_SCHEMA) {
    throw new OmniOptionError(
      'nativeHistograms.schema',
      `nativeHistograms.schema must be an integer from ${MIN_NATIVE_SCHEMA} to ${MAX_NATIVE_SCHEMA}; got ${shown(options.schema)}`,
    );
  }
  const maxBuckets = options.maxBuckets ?? DEFAULT_NATIVE_MAX_BUCKETS;
  if (!Number.isInteger(maxBuckets) || maxBuckets < 2 || maxBuckets > 65_536) {
    throw new OmniOptionError(
      'nativeHistograms.maxBuckets',
      `nativeHistograms.maxBuckets must be an integer from 2 to 65536; got ${shown(options.maxBuckets)}`,
    );
  }
  const zeroThreshold = options.zeroThreshold ?? DEFAULT_NATIVE_ZERO_THRESHOLD;
  if (typeof zeroThreshold !== 'number' || !(zeroThreshold >= 0) || zeroThreshold === Infinity) {
    throw new OmniOptionError(
      'nativeHistograms.zeroThreshold',
      `nativeHistograms.zeroThreshold must be a finite number >= 0; got ${shown(options.zeroThreshold)}`,
    );
  }
  checkArray(options.families, 'nativeHistograms.families');
  options.families?.forEach((name, i) => {
    const family = typeof name === 'string' ? catalog.byName(name) : undefined;
    if (family?.type !== 'histogram') {
      throw new OmniOptionError(
        `nativeHistograms.families[${i}]`,
        `nativeHistograms.families[${i}] must name a histogram family this configuration registers; got ${shown(name)}`,
      );
    }
  });
  return { config: Object.freeze({ schema, maxBuckets, zeroThreshold }), families: options.families && new Set(options.families) };
}

/** The native bucket layout of a family, or undefined when it keeps classic buckets only. */
export function nativeBucketConfigOf(settings: NativeHistogramSettings | undefined, family: ResolvedFamily): NativeBucketConfig | undefined {
  if (settings === undefined || family.type !== 'histogram') return undefined;
  return settings.families === undefined || settings.families.has(family.name) ? settings.config : undefined;
}
