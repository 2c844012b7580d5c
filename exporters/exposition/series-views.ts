import type { Attributes, HrTime } from '@opentelemetry/api';
import { formatGoFloat } from '../../views/common/go-float';
import { LABEL_NAME_PATTERN } from '../../views/catalog/names';
import type { CreatedTime, ExpositionSeries } from './model';

/** A start time as a series' creation: printed as `_created` (seconds since the epoch), formatted when first printed. */
export class StartTime implements CreatedTime {
  private text: string | undefined;

  constructor(readonly hrTime: HrTime) {}

  /** From seconds since the epoch, split the way `_created` joins them. */
  static ofSeconds(seconds: number): StartTime {
    const whole = Math.floor(seconds);
    return new StartTime([whole, Math.min(Math.round((seconds - whole) * 1e9), 999_999_999)]);
  }

  get exposition(): string {
    if (this.text === undefined) this.text = formatGoFloat(this.hrTime[0] + this.hrTime[1] / 1e9);
    return this.text;
  }
}

/** The attributes, when one of their keys is not a legacy label name (see `SeriesIdentity.sourceLabels`). */
export function sourceLabelsOf(attributes: Attributes): Attributes | undefined {
  for (const key of Object.keys(attributes)) if (!LABEL_NAME_PATTERN.test(key)) return attributes;
  return undefined;
}

/** What a view of a series may print differently from the series itself. */
export interface SeriesLabelsView {
  readonly plain?: string;
  readonly leOffset?: number;
  readonly sourceLabels?: Attributes | undefined;
}

/**
 * `series` printed with other labels: everything else (values, buckets, exemplars, native buckets,
 * creation) is read from the series itself, through the prototype, so a view of a store series
 * still reads its live cells.
 */
export function seriesView<S extends ExpositionSeries>(series: S, labels: SeriesLabelsView): S {
  const own: PropertyDescriptorMap = {};
  for (const key of Object.keys(labels) as Array<keyof SeriesLabelsView>) own[key] = { value: labels[key] };
  return Object.create(series, own) as S;
}
