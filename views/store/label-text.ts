import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { prometheusLabelName } from '../names';

/**
 * A series' labels as the exposition prints them, rendered once when the series is bound:
 * names sorted (prometheus_client's order, `le` sorted in with the rest), values escaped.
 */
export interface LabelText {
  /** `{a="1",b="2"}`, or `''` for a series without labels: the labels of every non-bucket sample. */
  readonly plain: string;
  /** A bucket sample's labels up to the `le` value: `{a="1",le="`. Histograms only. */
  readonly beforeLe: string;
  /** A bucket sample's labels after the `le` value: `",z="2"}`. Histograms only. */
  readonly afterLe: string;
}

export function renderLabelText(attributes: Attributes, withLe: boolean): LabelText {
  const pairs: Array<[string, string]> = [];
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value !== undefined) pairs.push([prometheusLabelName(key), escapeLabelValue(attributeText(value))]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const plain = pairs.length === 0 ? '' : `{${pairs.map(([name, value]) => `${name}="${value}"`).join(',')}}`;
  if (!withLe) return { plain, beforeLe: '', afterLe: '' };
  const before = pairs.filter(([name]) => name < 'le').map(([name, value]) => `${name}="${value}",`);
  const after = pairs.filter(([name]) => name >= 'le').map(([name, value]) => `,${name}="${value}"`);
  return { plain, beforeLe: `{${before.join('')}le="`, afterLe: `"${after.join('')}}` };
}

/** An attribute value as label text: arrays as JSON, everything else as `String()`. */
export function attributeText(value: AttributeValue): string {
  return Array.isArray(value) ? JSON.stringify(value) : String(value);
}

/** The text format's label value escapes: backslash, double quote, newline. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
