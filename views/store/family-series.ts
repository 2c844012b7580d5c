import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { ResolvedFamily } from '../catalog/catalog';
import { LimitedWarning } from '../common/diag-warnings';
import { prometheusLabelName } from '../catalog/names';
import { wellFormedText } from '../common/well-formed-text';
import { FixedLabelText, readLabels, renderLabelText, type LabelText } from './label-text';
import { CounterSeries, CreationTime, GaugeSeries, HistogramSeries, type BoundSeries, type SeriesOwner, type StoredSeries } from './series';
import type { NativeBucketConfig } from './native-buckets';
import { NativeHistogramSeries } from './native-histogram-series';
import { ExemplarCounterSeries, ExemplarHistogramSeries } from './exemplar-series';
import type { ExemplarScope } from './exemplar-scope';

/** A label value as recorders pass it; numbers print as `String(n)`. */
export type LabelValue = string | number;

const MIN_SERIES_PER_PAGE = 4;
const MAX_SERIES_PER_PAGE = 256;

/**
 * A label value as text. Values come from the host: anything that is not a string or a finite
 * number (a Symbol, an object whose `toString` throws, NaN) becomes a fixed placeholder instead of
 * throwing into the caller.
 */
function labelValueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return INVALID_LABEL_VALUE;
}

/** An extra label's value as readers other than the exposition get it: text made well-formed like the printed labels. */
function wellFormedAttribute(value: AttributeValue): AttributeValue {
  return typeof value === 'string' ? wellFormedText(value) : value;
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** What a label value that cannot be text is recorded as. */
export const INVALID_LABEL_VALUE = 'invalid';

/** The attribute that marks the one series a family folds label sets into once it is full (as the OpenTelemetry SDK). */
export const OVERFLOW_ATTRIBUTE = 'otel.metric.overflow';

export interface FamilySeriesContext {
  /** `model_name` of the overflow series. */
  readonly modelName: string;
  /** Label sets a family holds before it folds new ones into its overflow series. */
  readonly cardinalityLimit: number;
  /** The creation time of a series bound now (shared with the series bound just before, within a millisecond). */
  readonly creationTime: () => CreationTime;
  /** The native bucket layout of a histogram family that keeps native buckets too. */
  readonly nativeBuckets?: (family: ResolvedFamily) => NativeBucketConfig | undefined;
  /** Whether a family's series keep exemplars; absent: none do. */
  readonly keepsExemplars?: (family: ResolvedFamily) => boolean;
  /** The trace and time the store's exemplars are taken at (with `keepsExemplars`). */
  readonly exemplarScope?: ExemplarScope;
}

/** A clock for `FamilySeriesContext.creationTime`: series created within a millisecond of a group's first share its time. */
export function creationClock(now: () => number): () => CreationTime {
  let last: CreationTime | undefined;
  return () => {
    const millis = now();
    if (last === undefined || millis < last.millis || millis - last.millis >= 1) last = new CreationTime(millis);
    return last;
  };
}

/**
 * The series of one catalog family, in the order they were bound (the exposition's order, as
 * prometheus_client prints children in creation order). Label values are checked and rendered
 * once, when a series is bound; a record then touches only the series' own cell.
 */
export class FamilySeries implements SeriesOwner {
  readonly series: StoredSeries[] = [];
  /** The family's bucket bounds, shared by its series. Histograms only. */
  readonly bounds: Float64Array;
  /** The typed array new histogram series take their cells from, and how much of it is taken. */
  private page = new Float64Array(0);
  private pageUsed = 0;
  readonly invalidValues = new LimitedWarning();
  private readonly overCapacity = new LimitedWarning(Infinity);
  /** Series by their label text (an info family's: label text and extra labels). */
  private readonly byKey = new Map<string, StoredSeries>();
  private readonly labelText: FixedLabelText;
  private overflow: StoredSeries | undefined;
  /** Bumped whenever series are removed: whoever caches bound series of this family binds again. */
  generation = 0;
  /** Set when the family's histogram series keep native (sparse exponential) buckets as well. */
  readonly native: NativeBucketConfig | undefined;
  /** Whether this family's series keep exemplars (a subclass of the usual series, chosen once, here). */
  readonly exemplars: boolean;
  /** The trace and time this family's exemplars are taken at; set exactly when it keeps them. */
  readonly exemplarScope: ExemplarScope | undefined;

  constructor(
    readonly family: ResolvedFamily,
    /** The name readers see: the exposed name, or the `otel` scheme's stream name. */
    readonly streamName: string,
    private readonly context: FamilySeriesContext,
  ) {
    this.bounds = Float64Array.from(family.buckets ?? []);
    this.labelText = new FixedLabelText(family.labels);
    this.native = context.nativeBuckets?.(family);
    this.exemplarScope = context.keepsExemplars?.(family) === true ? context.exemplarScope : undefined;
    this.exemplars = this.exemplarScope !== undefined;
  }

  get name(): string {
    return this.family.name;
  }

  /** The series new label sets went into once the family was full, if it came to that. */
  get overflowed(): StoredSeries | undefined {
    return this.overflow;
  }

  /**
   * The series with these label values, in the family's label order (`family.labels`), created
   * at zero on first bind. `extraLabels` carry an info family's labels beyond its declared ones
   * (the cache config fields of `vllm:cache_config_info`). Past the cardinality limit, a new
   * label set gets the family's overflow series. A wrong number of values is a programming error.
   */
  bind(values: readonly LabelValue[], extraLabels?: Attributes): BoundSeries {
    const names = this.family.labels;
    if (values.length !== names.length) {
      throw new RangeError(`${this.name} takes ${names.length} label values (${names.join(', ')}); got ${values.length}`);
    }
    if (extraLabels !== undefined && !this.family.info) throw new TypeError(`${this.name} is not an info family: it has no extra labels`);
    const texts = values.every(isString) ? (values as readonly string[]) : values.map(labelValueText);
    if (extraLabels !== undefined) return this.bindInfo(texts, extraLabels);
    // The printed text is the key: values that print alike (lone surrogates made U+FFFD) are one series.
    const labels = this.labelText.render(texts);
    const existing = this.byKey.get(labels.plain);
    if (existing !== undefined) return existing;
    if (this.byKey.size >= this.context.cardinalityLimit) return this.overflowSeries();
    const series = this.create(labels, undefined);
    this.byKey.set(labels.plain, series);
    return series;
  }

  /** An info family's series: its declared labels and the extra ones, keyed by all of them as printed. */
  private bindInfo(texts: readonly string[], extraLabels: Attributes): BoundSeries {
    const attributes: Attributes = {};
    for (const [name, value] of Object.entries(extraLabels)) if (value !== undefined) attributes[name] = wellFormedAttribute(value);
    this.family.labels.forEach((name, i) => {
      attributes[name] = wellFormedText(texts[i] as string);
    });
    const labels = renderLabelText(Object.freeze(attributes));
    const existing = this.byKey.get(labels.plain);
    if (existing !== undefined) return existing;
    if (this.byKey.size >= this.context.cardinalityLimit) return this.overflowSeries();
    const series = this.create(labels, attributes);
    this.byKey.set(labels.plain, series);
    return series;
  }

  /** The attributes of a series with this label text, in the family's label order. */
  attributesOf(plain: string): Attributes {
    const printed = new Map(readLabels(plain));
    const attributes: Attributes = {};
    for (const name of this.family.labels) attributes[name] = printed.get(prometheusLabelName(name));
    return Object.freeze(attributes);
  }

  /**
   * Removes the series whose labels match (a replica that left): they leave the next collection,
   * and a later bind of the same labels creates a new series, from zero with a new `_created`.
   * Returns how many were removed.
   */
  removeWhere(match: (series: StoredSeries) => boolean): number {
    let removed = 0;
    for (const [key, series] of this.byKey) {
      if (!match(series)) continue;
      this.byKey.delete(key);
      removed++;
    }
    if (removed === 0) return 0;
    for (let i = this.series.length - 1; i >= 0; i--) {
      const series = this.series[i] as StoredSeries;
      if (series !== this.overflow && match(series)) this.series.splice(i, 1);
    }
    this.generation++;
    return removed;
  }

  /** The series as they are now, in order: a copy that later binds and removals leave alone (a rendering in slices reads it). */
  seriesSnapshot(): readonly StoredSeries[] {
    return this.series.slice();
  }

  private overflowSeries(): StoredSeries {
    if (this.overflow === undefined) {
      const attributes: Attributes = this.family.labels.includes('model_name') ? { model_name: wellFormedText(this.context.modelName) } : {};
      attributes[OVERFLOW_ATTRIBUTE] = 'true';
      this.overflow = this.create(renderLabelText(Object.freeze(attributes)), attributes);
    }
    this.overCapacity.warn(
      `${this.name} holds ${this.context.cardinalityLimit} series (its cardinality limit); further label sets are recorded in one series labelled otel_metric_overflow="true"`,
    );
    return this.overflow;
  }

  private create(labels: LabelText, attributes: Attributes | undefined): StoredSeries {
    const created = this.context.creationTime();
    const series =
      this.family.type === 'counter'
        ? new (this.exemplars ? ExemplarCounterSeries : CounterSeries)(this, labels.plain, created, attributes)
        : this.family.type === 'gauge'
          ? new GaugeSeries(this, labels.plain, created, attributes)
          : this.newHistogram(labels, created, attributes);
    this.series.push(series);
    return series;
  }

  /**
   * Histogram series take `bounds.length + 3` cells from a page shared with their neighbours:
   * one typed array per page instead of one per series. Pages never move (a series keeps its
   * page), and grow with the family, from 4 series to 256, so little is left unused.
   */
  private newHistogram(labels: LabelText, created: CreationTime, attributes: Attributes | undefined): HistogramSeries {
    const stride = this.bounds.length + 3;
    if (this.pageUsed + stride > this.page.length) {
      const seriesPerPage = Math.min(MAX_SERIES_PER_PAGE, Math.max(MIN_SERIES_PER_PAGE, this.series.length));
      this.page = new Float64Array(seriesPerPage * stride);
      this.pageUsed = 0;
    }
    const series =
      this.native !== undefined
        ? new NativeHistogramSeries(this, labels.plain, labels.leOffset, created, attributes, this.page, this.pageUsed, this.native)
        : new (this.exemplars ? ExemplarHistogramSeries : HistogramSeries)(this, labels.plain, labels.leOffset, created, attributes, this.page, this.pageUsed);
    this.pageUsed += stride;
    return series;
  }
}
