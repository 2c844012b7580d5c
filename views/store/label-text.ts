import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { prometheusLabelName } from '../catalog/names';
import { wellFormedText } from '../common/well-formed-text';

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
  const pairs = labelPairs(attributes);
  if (pairs.length === 0) return { plain: '', leOffset: 0 };
  const texts = pairs.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  const before = pairs.filter(([name]) => name < 'le').length;
  const plain = `{${texts.join(',')}}`;
  const leOffset = before === pairs.length ? plain.length - 1 : 1 + texts.slice(0, before).reduce((length, text) => length + text.length + 1, 0);
  return { plain, leOffset };
}

/** Attributes as label pairs, as every exposition carries them: Prometheus label names, sorted; values as text, unescaped. */
export function labelPairs(attributes: Attributes): Array<[name: string, value: string]> {
  const pairs: Array<[string, string]> = [];
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value !== undefined) pairs.push([prometheusLabelName(key), attributeText(value)]);
  }
  return pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
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

/** What `render` may change; any surrogate, paired or not, takes that path (pairs are rare in label values). */
const NEEDS_ESCAPE = /[\\"\n\uD800-\uDFFF]/;

/**
 * Label text for one fixed list of label names (a family's): the names are sorted and their
 * `name="` pieces built once, so a bind only escapes and joins the values.
 */
export class FixedLabelText {
  /** Positions in the values list, in printed (sorted) order. */
  private readonly order: readonly number[];
  /** `{name="`, then `",name="` for each later label. */
  private readonly openers: readonly string[];
  /** How many labels sort before `le`. */
  private readonly beforeLe: number;

  constructor(names: readonly string[]) {
    const printed = names.map((name, index) => ({ name: prometheusLabelName(name), index }));
    printed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.order = printed.map(({ index }) => index);
    this.openers = printed.map(({ name }, i) => `${i === 0 ? '{' : '",'}${name}="`);
    this.beforeLe = printed.filter(({ name }) => name < 'le').length;
  }

  /** The label text of these values (given in the names' order), as `renderLabelText` renders the same attributes made well-formed. */
  render(values: readonly string[]): LabelText {
    const count = this.order.length;
    if (count === 0) return { plain: '', leOffset: 0 };
    const parts = new Array<string>(2 * count + 1);
    let length = 0;
    let leOffset = -1;
    for (let i = 0; i < count; i++) {
      if (i === this.beforeLe) leOffset = length + (i === 0 ? 1 : 2);
      const opener = this.openers[i] as string;
      const raw = values[this.order[i] as number] as string;
      // Lone surrogates become U+FFFD: the rendered text is the series' key, so values that would print alike are one series.
      const value = NEEDS_ESCAPE.test(raw) ? escapeLabelValue(wellFormedText(raw)) : raw;
      parts[2 * i] = opener;
      parts[2 * i + 1] = value;
      length += opener.length + value.length;
    }
    parts[2 * count] = '"}';
    // `join` builds one flat string; `+=` would keep a tree of pieces alive for as long as the series lives.
    const plain = parts.join('');
    return { plain, leOffset: leOffset === -1 ? plain.length - 1 : leOffset };
  }
}

/** The unescaped value of label `name` in a label text, without reading the others. */
export function readLabelValue(plain: string, name: string): string | undefined {
  let at = plain.indexOf(`{${name}="`);
  if (at === -1) at = plain.indexOf(`,${name}="`);
  // A value's own quotes are escaped, so `,name="` with a bare quote only ever starts a pair.
  return at === -1 ? undefined : readQuoted(plain, at + name.length + 3).value;
}

/** Every label of a label text, unescaped, in printed order. */
export function readLabels(plain: string): Array<[string, string]> {
  const labels: Array<[string, string]> = [];
  let at = 1;
  while (at < plain.length - 1) {
    const equals = plain.indexOf('="', at);
    const { value, end } = readQuoted(plain, equals + 2);
    labels.push([plain.slice(at, equals), value]);
    at = end + 2;
  }
  return labels;
}

/** The escaped value starting at `start`, unescaped, and the index of its closing quote. */
function readQuoted(plain: string, start: number): { value: string; end: number } {
  let value = '';
  let i = start;
  for (; i < plain.length; i++) {
    const char = plain[i];
    if (char === '"') break;
    if (char === '\\') {
      const next = plain[++i];
      value += next === 'n' ? '\n' : (next as string);
    } else value += char;
  }
  return { value, end: i };
}
