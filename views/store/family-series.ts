import type { Attributes } from '@opentelemetry/api';
import type { ResolvedFamily } from '../catalog';
import { LimitedWarning } from '../diag-warnings';
import { renderLabelText, type LabelText } from './label-text';
import { CounterSeries, GaugeSeries, HistogramSeries, type BoundSeries, type SeriesOwner, type StoredSeries } from './series';

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

/**
 * The lookup key of a label set: the values joined with NUL, then SOH and an info family's extra
 * labels. A value that holds NUL or SOH itself (host data) could make two label sets share that
 * key, so such a set is keyed by SOH and its values' JSON instead: JSON escapes both, and a
 * joined key holds no SOH before its extra labels' `{`. (Scanning while joining costs less than
 * `join`.)
 */
function seriesKey(texts: readonly string[], extraLabels: Attributes | undefined): string {
  let values = '';
  scan: for (let i = 0; i < texts.length; i++) {
    const text = texts[i] as string;
    for (let j = 0; j < text.length; j++) {
      if (text.charCodeAt(j) <= 1) {
        values = `\u0001${JSON.stringify(texts)}`;
        break scan;
      }
    }
    values = i === 0 ? text : `${values}\u0000${text}`;
  }
  return extraLabels === undefined ? values : `${values}\u0001${JSON.stringify(extraLabels)}`;
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
  /** Wall clock in milliseconds since the epoch: a series' creation time. */
  readonly now: () => number;
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
  private readonly byKey = new Map<string, StoredSeries>();
  private overflow: StoredSeries | undefined;
  /** Bumped whenever series are removed: whoever caches bound series of this family binds again. */
  generation = 0;

  constructor(
    readonly family: ResolvedFamily,
    /** The name readers see: the exposed name, or the `otel` scheme's stream name. */
    readonly streamName: string,
    private readonly context: FamilySeriesContext,
  ) {
    this.bounds = Float64Array.from(family.buckets ?? []);
  }

  get name(): string {
    return this.family.name;
  }

  /**
   * The series with these label values, in the family's label order (`family.labels`), created
   * at zero on first bind. `extraLabels` carry an info family's labels beyond its declared ones
   * (the cache config fields of `vllm:cache_config_info`). Past the cardinality limit, a new
   * label set gets the family's overflow series. A wrong number of values is a programming error.
   */
  bind(values: readonly LabelValue[], extraLabels?: Attributes): BoundSeries {
    const labels = this.family.labels;
    if (values.length !== labels.length) {
      throw new RangeError(`${this.name} takes ${labels.length} label values (${labels.join(', ')}), got ${values.length}`);
    }
    if (extraLabels !== undefined && !this.family.info) throw new TypeError(`${this.name} is not an info family: it has no extra labels`);
    const texts = values.map(labelValueText);
    const key = seriesKey(texts, extraLabels);
    const existing = this.byKey.get(key);
    if (existing !== undefined) return existing;
    if (this.byKey.size >= this.context.cardinalityLimit) return this.overflowSeries();
    const attributes: Attributes = { ...extraLabels };
    labels.forEach((name, i) => {
      attributes[name] = texts[i];
    });
    const series = this.create(attributes);
    this.byKey.set(key, series);
    return series;
  }

  /**
   * Removes the series whose labels match (a replica that left): they leave the next collection,
   * and a later bind of the same labels creates a new series, from zero with a new `_created`.
   * Returns how many were removed.
   */
  removeWhere(match: (attributes: Attributes) => boolean): number {
    let removed = 0;
    for (const [key, series] of this.byKey) {
      if (!match(series.attributes)) continue;
      this.byKey.delete(key);
      removed++;
    }
    if (removed === 0) return 0;
    for (let i = this.series.length - 1; i >= 0; i--) {
      const series = this.series[i] as StoredSeries;
      if (series !== this.overflow && match(series.attributes)) this.series.splice(i, 1);
    }
    this.generation++;
    return removed;
  }

  private overflowSeries(): StoredSeries {
    if (this.overflow === undefined) {
      const attributes: Attributes = this.family.labels.includes('model_name') ? { model_name: this.context.modelName } : {};
      attributes[OVERFLOW_ATTRIBUTE] = 'true';
      this.overflow = this.create(attributes);
    }
    this.overCapacity.warn(
      `${this.name} holds ${this.context.cardinalityLimit} series (its cardinality limit); further label sets are recorded in one series labelled otel_metric_overflow="true"`,
    );
    return this.overflow;
  }

  private create(attributes: Attributes): StoredSeries {
    Object.freeze(attributes);
    const labels = renderLabelText(attributes);
    const created = this.context.now();
    const series =
      this.family.type === 'counter'
        ? new CounterSeries(this, attributes, labels, created)
        : this.family.type === 'gauge'
          ? new GaugeSeries(this, attributes, labels, created)
          : this.newHistogram(attributes, labels, created);
    this.series.push(series);
    return series;
  }

  /**
   * Histogram series take `bounds.length + 3` cells from a page shared with their neighbours:
   * one typed array per page instead of one per series. Pages never move (a series keeps its
   * page), and grow with the family, from 4 series to 256, so little is left unused.
   */
  private newHistogram(attributes: Attributes, labels: LabelText, created: number): HistogramSeries {
    const stride = this.bounds.length + 3;
    if (this.pageUsed + stride > this.page.length) {
      const seriesPerPage = Math.min(MAX_SERIES_PER_PAGE, Math.max(MIN_SERIES_PER_PAGE, this.series.length));
      this.page = new Float64Array(seriesPerPage * stride);
      this.pageUsed = 0;
    }
    const series = new HistogramSeries(this, attributes, labels, created, this.page, this.pageUsed);
    this.pageUsed += stride;
    return series;
  }
}
