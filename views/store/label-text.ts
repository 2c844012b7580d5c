import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { prometheusLabelName } from '../names';

/**
 * A series' labels as the exposition prints them, rendered once when the series is bound: names
 * sorted (prometheus_client's order, `le` sorted in with the rest), values escaped.
 */
export interface LabelText {
  /** `{a="1",b="2"}`, or `''` for a series without labels: the labels of every non-bucket sample. */
  readonly plain: string;
  /**
   * Where a bucket's `le` pair goes in `plain`: right after `{` or after the comma that ends the
   * pair before it; `plain.length - 1` (the closing brace) when it sorts last.
   */
  readonly leOffset: number;
}

export function renderLabelText(attributes: Attributes): LabelText {
  const pairs: Array<[string, string]> = [];
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value !== undefined) pairs.push([prometheusLabelName(key), escapeLabelValue(attributeText(value))]);
  }
  if (pairs.length === 0) return { plain: '', leOffset: 0 };
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const texts = pairs.map(([name, value]) => `${name}="${value}"`);
  const before = pairs.filter(([name]) => name < 'le').length;
  const plain = `{${texts.join(',')}}`;
  const leOffset = before === pairs.length ? plain.length - 1 : 1 + texts.slice(0, before).reduce((length, text) => length + text.length + 1, 0);
  return { plain, leOffset };
}

/** A bucket sample's labels around its `le` value: `{a="1",le="` and `",z="2"}`. */
export function bucketLabelParts(labels: LabelText): { readonly before: string; readonly after: string } {
  const { plain, leOffset } = labels;
  if (plain === '') return { before: '{le="', after: '"}' };
  if (leOffset === plain.length - 1) return { before: `${plain.slice(0, leOffset)},le="`, after: '"}' };
  return { before: `${plain.slice(0, leOffset)}le="`, after: `",${plain.slice(leOffset)}` };
}

/** An attribute value as label text: arrays as JSON, everything else as `String()`. */
export function attributeText(value: AttributeValue): string {
  return Array.isArray(value) ? JSON.stringify(value) : String(value);
}

/** The text format's label value escapes: backslash, double quote, newline. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
