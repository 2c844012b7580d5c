/**
 * Small readers over the Prometheus text exposition (`metricsText()` output), for tests that assert exact
 * sample values. Sample lines are tokenized properly (`name{a="x",b="y"} value [timestamp]`, label values with
 * `\\`, `\"` and `\n` escapes), never matched with ad-hoc regular expressions.
 */
import type { SeriesStore } from '../../views/store/series-store';
import type { ExpositionFormat } from '../../exporters/exposition/exposition-text';
import { storeFamilies } from '../../exporters/exposition/store-families';
import { writeText } from '../../exporters/exposition/text-writer';
import { writeProtobuf } from '../../exporters/exposition/protobuf-writer';

export type Labels = Record<string, string>;

export interface Sample {
  readonly name: string;
  readonly labels: Labels;
  /** The value as printed (`1.0`, `+Inf`, `1e+06`). */
  readonly rawValue: string;
  readonly value: number;
}

export interface HistogramSamples {
  /** Cumulative bucket counts in exposition order, `le` as printed (`"0.25"`, `"1.0"`, `"+Inf"`). */
  readonly buckets: Array<[le: string, cumulativeCount: number]>;
  readonly count: number;
  readonly sum: number;
}

/** A Go/Prometheus float as printed: `+Inf`, `-Inf`, `NaN`, or a decimal / exponent literal. */
export function parseGoFloat(text: string): number {
  switch (text) {
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    case 'NaN':
      return NaN;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new SyntaxError(`not a sample value: ${JSON.stringify(text)}`);
  return Number(text);
}

const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
const LABEL_START = /[a-zA-Z_]/;
const LABEL_CHAR = /[a-zA-Z0-9_]/;

/** One sample line; throws a SyntaxError naming the column on malformed input. */
export function parseSampleLine(line: string): Sample {
  let pos = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at column ${pos} of ${JSON.stringify(line)}`);
  };
  const readWhile = (pattern: RegExp): string => {
    const start = pos;
    while (pos < line.length && pattern.test(line[pos] as string)) pos++;
    return line.slice(start, pos);
  };
  const skipBlanks = (): void => {
    while (line[pos] === ' ' || line[pos] === '\t') pos++;
  };

  if (!NAME_START.test(line[pos] ?? '')) fail('expected a metric name');
  const name = readWhile(NAME_CHAR);
  const labels: Labels = {};
  if (line[pos] === '{') {
    pos++;
    skipBlanks();
    while (line[pos] !== '}') {
      if (!LABEL_START.test(line[pos] ?? '')) fail('expected a label name');
      const labelName = readWhile(LABEL_CHAR);
      skipBlanks();
      if (line[pos] !== '=') fail('expected "="');
      pos++;
      skipBlanks();
      if (line[pos] !== '"') fail('expected an opening quote');
      pos++;
      let value = '';
      for (;;) {
        const ch = line[pos];
        if (ch === undefined) fail('unterminated label value');
        if (ch === '"') break;
        if (ch === '\\') {
          const next = line[pos + 1];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else fail('bad escape in label value');
          pos += 2;
          continue;
        }
        value += ch;
        pos++;
      }
      pos++; // closing quote
      if (Object.prototype.hasOwnProperty.call(labels, labelName)) fail(`duplicate label ${labelName}`);
      labels[labelName] = value;
      skipBlanks();
      if (line[pos] === ',') {
        pos++;
        skipBlanks();
      } else if (line[pos] !== '}') {
        fail('expected "," or "}"');
      }
    }
    pos++; // closing brace
  }
  if (line[pos] !== ' ' && line[pos] !== '\t') fail('expected a blank before the value');
  skipBlanks();
  const rawValue = readWhile(/[^ \t]/);
  if (rawValue === '') fail('expected a value');
  skipBlanks();
  // An optional integer timestamp may follow.
  const timestamp = readWhile(/[-0-9]/);
  skipBlanks();
  if (pos !== line.length || (timestamp !== '' && !/^-?\d+$/.test(timestamp))) fail('unexpected trailing text');
  return { name, labels, rawValue, value: parseGoFloat(rawValue) };
}

/** Every sample line of an exposition, in order (comments and blank lines skipped). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    samples.push(parseSampleLine(line));
  }
  return samples;
}

/** Exact label-set equality, order-insensitive. */
export function sameLabelSet(a: Labels, b: Labels): boolean {
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return keysA.length === keysB.length && keysA.every((key) => Object.prototype.hasOwnProperty.call(b, key) && a[key] === b[key]);
}

/** The value of the one sample `sampleName` with exactly `labels`, or undefined. Throws if it appears twice. */
export function sampleValue(text: string, sampleName: string, labels: Labels): number | undefined {
  const matches = parseSamples(text).filter((s) => s.name === sampleName && sameLabelSet(s.labels, labels));
  if (matches.length > 1) throw new Error(`${sampleName}${JSON.stringify(labels)} appears ${matches.length} times`);
  return matches[0]?.value;
}

/** The label sets of every `sampleName` sample, in exposition order. */
export function seriesOf(text: string, sampleName: string): Labels[] {
  return parseSamples(text)
    .filter((s) => s.name === sampleName)
    .map((s) => ({ ...s.labels }));
}

/**
 * The histogram series of `familyName` with exactly `labels` (the `le` label excluded): cumulative buckets in
 * exposition order, `_count` and `_sum`. Undefined when the series has no `_count` sample.
 */
export function histogramOf(text: string, familyName: string, labels: Labels): HistogramSamples | undefined {
  const samples = parseSamples(text);
  const buckets: Array<[string, number]> = [];
  let count: number | undefined;
  let sum: number | undefined;
  for (const sample of samples) {
    if (sample.name === `${familyName}_bucket`) {
      const { le, ...rest } = sample.labels;
      if (le !== undefined && sameLabelSet(rest, labels)) buckets.push([le, sample.value]);
    } else if (sample.name === `${familyName}_count` && sameLabelSet(sample.labels, labels)) {
      if (count !== undefined) throw new Error(`${familyName}_count${JSON.stringify(labels)} appears twice`);
      count = sample.value;
    } else if (sample.name === `${familyName}_sum` && sameLabelSet(sample.labels, labels)) {
      if (sum !== undefined) throw new Error(`${familyName}_sum${JSON.stringify(labels)} appears twice`);
      sum = sample.value;
    }
  }
  if (count === undefined) return undefined;
  return { buckets, count, sum: sum ?? NaN };
}

/** Names of the families announced with `# TYPE` lines, in order. */
export function declaredFamilyNames(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('# TYPE '))
    .map((line) => line.split(' ')[2] as string);
}

/** The store's families alone, written as a scrape writes them (OpenMetrics ends with `# EOF`). */
export function renderStore(store: SeriesStore, options: { readonly format: ExpositionFormat; readonly createdSeries: boolean }): Buffer {
  return Buffer.from(writeText(storeFamilies(store), options), 'utf8');
}

/** The store's families alone as the protobuf exposition. */
export function storeProtobuf(store: SeriesStore, createdSeries = false): Buffer {
  return writeProtobuf(storeFamilies(store), { createdSeries });
}
