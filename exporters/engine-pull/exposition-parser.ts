import { nextSlice, sliceDue } from '../event-loop-slices';
import { isTimestamp, readGoFloat } from './go-float-text';
import type { ParsedFamily, ParsedSample, ParsedType } from '../parsed-family';

/**
 * A strict parser of the Prometheus text format 0.0.4, as a vLLM server's `/metrics` prints it
 * (Python prometheus_client), and of the OpenMetrics 1.0 an engine may answer whatever it was
 * asked. It takes outside input, so it accepts only well-formed text and rejects the rest with the
 * line number: a duplicate HELP / TYPE, a family split in two groups, a duplicate sample, a bad
 * escape, a value that is not a Go float, a token past its length bound.
 *
 * OpenMetrics is read as prometheus_client prints the same registry in the 0.0.4 text, so a family
 * reads the same whichever format the engine spoke: `_created` samples go to an `X_created` gauge
 * family, an `info` family `X` is the gauge `X_info`, a `stateset` a gauge, `unknown` untyped.
 * What the package has no use for is read past and not kept: exemplars (` # {…} value [ts]` after
 * a sample), sample timestamps (milliseconds in 0.0.4, seconds in OpenMetrics), `# UNIT` and
 * `# EOF`, and `gaugehistogram` families (no counterpart in the store's model: `ParseLimits.unused`
 * hears of them).
 *
 * It runs in time linear in its input: every token is read by a hand-written scanner (no
 * backtracking pattern) and bounded in length before anything else looks at it. It can stop after
 * any number of lines and go on later (`ExpositionParser.parseLines`), so a large body is read in
 * slices that leave the event loop to the host in between (`parseExpositionInSlices`). What it
 * keeps is bounded by `ParseLimits`: families a caller does not keep are checked but not stored,
 * and a family keeps at most `maxSeriesPerFamily` series.
 *
 * Why not a library: `parse-prometheus-text-format` (the only maintained-looking npm option, last
 * release 1.1.1) drops the labels, `_count` and `_sum` of histograms whose names contain colons
 * (every `vllm:*` histogram), keeps values as strings and does not reject malformed input.
 */

export interface ParseLimits {
  /** Families whose samples are stored; the others are checked and forgotten. Default: every family. */
  readonly keep?: (familyName: string) => boolean;
  /**
   * Series (label sets, `le` / `quantile` aside) stored per family; samples of later series are
   * counted in `droppedSamples` and not stored. Default: no limit.
   */
  readonly maxSeriesPerFamily?: number;
  /** Series stored over all families, the same way. Default: no limit. */
  readonly maxSeries?: number;
  /** Told of each family `keep` wants whose type the parser reads past (an OpenMetrics `gaugehistogram`), at its TYPE line. */
  readonly unused?: (familyName: string, type: string) => void;
}

/** Longest metric or label name accepted. */
export const MAX_NAME_CHARS = 512;
/** Longest label value accepted (after unescaping; a model path is a few hundred). */
export const MAX_LABEL_VALUE_CHARS = 4096;
/** Most labels on one sample. */
export const MAX_LABELS = 64;
/** Longest HELP text accepted. */
export const MAX_HELP_CHARS = 16_384;

export class ExpositionParseError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'ExpositionParseError';
  }
}

/** How a family's samples are named and grouped: a stored type, or an OpenMetrics type read as one. */
type ReadType = ParsedType | 'gaugehistogram' | 'info' | 'stateset';

/** The TYPE lines of both formats (OpenMetrics' `unknown` is the text's `untyped`). */
const TYPES: ReadonlyMap<string, ReadType> = new Map([
  ['counter', 'counter'],
  ['gauge', 'gauge'],
  ['histogram', 'histogram'],
  ['summary', 'summary'],
  ['untyped', 'untyped'],
  ['unknown', 'untyped'],
  ['stateset', 'stateset'],
  ['info', 'info'],
  ['gaugehistogram', 'gaugehistogram'],
] as const);

interface MutableFamily {
  readonly name: string;
  type: ReadType | undefined;
  help: string | undefined;
  /** Whether anything of the family was read yet (stored or not): metadata after that is an error. */
  started: boolean;
  stored: boolean;
  readonly samples: ParsedSample[];
  readonly keys: Set<string>;
  readonly series: Set<string>;
  droppedSamples: number;
}

/** Parses a whole exposition at once; throws `ExpositionParseError` on anything malformed. */
export function parseExposition(text: string, limits: ParseLimits = {}): ParsedFamily[] {
  const parser = new ExpositionParser(text, limits);
  while (!parser.parseLines(Number.MAX_SAFE_INTEGER));
  return parser.families();
}

export interface SliceOptions {
  /** Give up (rejecting with an Error) once the clock passes this, in `now()` milliseconds. Default: never. */
  readonly deadlineMillis?: number;
  readonly now?: () => number;
}

/** Lines parsed between two looks at the clock. */
const LINES_PER_CHECK = 256;

/**
 * Parses in slices, yielding to the event loop between them (see `event-loop-slices.ts`), so a
 * 16 MiB body never blocks the host for long. Rejects with `ExpositionParseError` on
 * malformed text, or an Error once `deadlineMillis` has passed.
 */
export async function parseExpositionInSlices(text: string, limits: ParseLimits = {}, options: SliceOptions = {}): Promise<ParsedFamily[]> {
  const now = options.now ?? Date.now;
  const parser = new ExpositionParser(text, limits);
  for (;;) {
    let done = false;
    while (!done && !sliceDue()) done = parser.parseLines(LINES_PER_CHECK);
    if (done) return parser.families();
    if (options.deadlineMillis !== undefined && now() > options.deadlineMillis) {
      throw new Error(`parsing took longer than the time left (${text.length} characters, stopped at line ${parser.lineNumber})`);
    }
    await nextSlice();
  }
}

/** The parse of one text, line by line, resumable between lines. */
export class ExpositionParser {
  private readonly familiesByName = new Map<string, MutableFamily>();
  private current: MutableFamily | undefined;
  private pos = 0;
  /** The number of the last line read. */
  lineNumber = 0;
  private readonly keep: (familyName: string) => boolean;
  private readonly maxSeries: number;
  private readonly maxSeriesTotal: number;
  private readonly unused: ParseLimits['unused'];
  private seriesTotal = 0;

  constructor(
    private readonly text: string,
    limits: ParseLimits = {},
  ) {
    this.keep = limits.keep ?? (() => true);
    this.maxSeries = limits.maxSeriesPerFamily ?? Infinity;
    this.maxSeriesTotal = limits.maxSeries ?? Infinity;
    this.unused = limits.unused;
  }

  /** Reads up to `maxLines` more lines; true once the whole text is read. */
  parseLines(maxLines: number): boolean {
    const text = this.text;
    for (let n = 0; n < maxLines; n++) {
      if (this.pos >= text.length) return true;
      let end = text.indexOf('\n', this.pos);
      if (end < 0) end = text.length;
      const line = text.slice(this.pos, end);
      this.pos = end + 1;
      this.lineNumber++;
      // A final newline leaves nothing behind; other empty lines are allowed too.
      if (line !== '') this.parseLine(line);
    }
    return this.pos >= text.length;
  }

  families(): ParsedFamily[] {
    const result: ParsedFamily[] = [];
    for (const family of this.familiesByName.values()) {
      if (!family.stored) continue;
      const { name, type, help, samples, droppedSamples } = family;
      result.push({ name: type === 'info' ? `${name}_info` : name, type: textType(type), help: help ?? '', samples, droppedSamples });
    }
    return result;
  }

  private fail(message: string): never {
    throw new ExpositionParseError(message, this.lineNumber);
  }

  private parseLine(line: string): void {
    if (line.charCodeAt(0) === 35 /* # */) {
      this.parseComment(line);
      return;
    }
    const sample = this.parseSampleLine(line);
    const created = this.inlineCreated(sample.name);
    if (created !== undefined) {
      created.started = true;
      if (created.stored) this.addSample(created, sample);
      return;
    }
    const family = this.familyOfSample(sample.name);
    if (family !== this.current && family.started) this.fail(`samples of ${family.name} are not in one group`);
    family.started = true;
    this.current = family;
    if (family.stored) this.addSample(family, sample);
  }

  /** `# HELP name text`, `# TYPE name type`, or any other comment (skipped). */
  private parseComment(line: string): void {
    let pos = skipBlanks(line, 1);
    if (pos === 1) return; // `#HELP` is a comment, as in Prometheus
    const keyword = line.startsWith('HELP', pos) ? 'HELP' : line.startsWith('TYPE', pos) ? 'TYPE' : undefined;
    if (keyword === undefined) return;
    pos += 4;
    const nameStart = skipBlanks(line, pos);
    if (nameStart === pos) return; // `# HELPER …`: a comment
    let nameEnd = nameStart;
    while (nameEnd < line.length && !isBlank(line.charCodeAt(nameEnd))) nameEnd++;
    if (nameEnd === nameStart) return;
    const name = line.slice(nameStart, nameEnd);
    if (!isMetricName(name)) this.fail(`invalid metric name ${quoteShort(name)} in ${keyword}`);
    const rest = nameEnd < line.length ? line.slice(nameEnd + 1) : '';
    const family = this.familiesByName.get(name) ?? this.newFamily(name);
    if (family !== this.current && family.started) this.fail(`${keyword} for ${name} after its samples`);
    if (keyword === 'HELP') {
      if (family.help !== undefined) this.fail(`second HELP for ${name}`);
      if (rest.length > MAX_HELP_CHARS) this.fail(`HELP for ${name} longer than ${MAX_HELP_CHARS} characters`);
      family.help = this.unescapeHelp(rest);
    } else {
      if (family.type !== undefined) this.fail(`second TYPE for ${name}`);
      const written = rest.trim();
      const type = TYPES.get(written);
      if (type === undefined) this.fail(`unknown type ${quoteShort(written)} for ${name}`);
      if (family.started) this.fail(`TYPE for ${name} after its samples`);
      family.type = type;
      // An info family prints as the gauge X_info: that is the name kept or not.
      if (type === 'info') family.stored = this.keep(`${name}_info`);
      if (type === 'gaugehistogram' && family.stored) {
        family.stored = false;
        this.unused?.(name, written);
      }
    }
    this.current = family;
  }

  private newFamily(name: string): MutableFamily {
    const family: MutableFamily = {
      name,
      type: undefined,
      help: undefined,
      started: false,
      stored: this.keep(name),
      samples: [],
      keys: new Set(),
      series: new Set(),
      droppedSamples: 0,
    };
    this.familiesByName.set(name, family);
    return family;
  }

  /**
   * OpenMetrics prints a counter's, histogram's or summary's `_created` right after each of its
   * series, inside the family (vLLM's Rust frontend serves nothing else). Those samples go to the
   * `X_created` gauge family the 0.0.4 text has (prometheus_client's shape, HELP copied), so the
   * family reads the same whichever format the engine spoke.
   */
  private inlineCreated(sampleName: string): MutableFamily | undefined {
    const current = this.current;
    if (current === undefined || !sampleName.endsWith('_created')) return undefined;
    if (current.type !== 'counter' && current.type !== 'histogram' && current.type !== 'summary') return undefined;
    const stem = current.type === 'counter' && current.name.endsWith('_total') ? current.name.slice(0, -'_total'.length) : current.name;
    if (sampleName !== `${stem}_created`) return undefined;
    const created = this.familiesByName.get(sampleName) ?? this.newFamily(sampleName);
    if (created.type === undefined) {
      created.type = 'gauge';
      created.help = current.help;
    }
    return created;
  }

  /** The family a sample belongs to: the current one when the name is one of its sample names, else its own (untyped) one. */
  private familyOfSample(sampleName: string): MutableFamily {
    const current = this.current;
    if (current !== undefined && belongs(current, sampleName)) return current;
    return this.familiesByName.get(sampleName) ?? this.newFamily(sampleName);
  }

  private addSample(family: MutableFamily, sample: ParsedSample): void {
    const isBucket = (family.type === 'histogram' || family.type === 'gaugehistogram') && sample.name.endsWith('_bucket');
    const le = sample.labels.le;
    if (isBucket && le === undefined) this.fail(`${sample.name} without an le label`);
    if (isBucket && readGoFloat(le as string) === undefined) this.fail(`invalid le ${quoteShort(le as string)}`);
    const quantile = sample.labels.quantile;
    if (family.type === 'summary' && sample.name === family.name && quantile === undefined) this.fail(`${sample.name} without a quantile label`);
    const entries = Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = `${sample.name}${JSON.stringify(entries)}`;
    if (family.keys.has(key)) this.fail(`duplicate sample ${sample.name} with the same labels`);
    const grouped = family.type === 'histogram' || family.type === 'summary';
    const seriesKey = JSON.stringify(grouped ? entries.filter(([label]) => label !== 'le' && label !== 'quantile') : entries);
    if (!family.series.has(seriesKey)) {
      if (family.series.size >= this.maxSeries || this.seriesTotal >= this.maxSeriesTotal) {
        family.droppedSamples++;
        return;
      }
      family.series.add(seriesKey);
      this.seriesTotal++;
    }
    family.keys.add(key);
    family.samples.push(sample);
  }

  /**
   * `name{a="x",b="y"} value [timestamp] [# exemplar]`, blanks allowed between tokens as Prometheus
   * allows them. The timestamp (an integer of milliseconds, or OpenMetrics' seconds) and an
   * OpenMetrics exemplar (` # {labels} value [timestamp]`) are read past, not kept.
   */
  private parseSampleLine(line: string): ParsedSample {
    let pos = 0;
    const fail = (what: string): never => this.fail(`${what} at column ${pos + 1}`);
    const nameEnd = scanName(line, pos, true);
    if (nameEnd === pos) fail('expected a metric name');
    if (nameEnd - pos > MAX_NAME_CHARS) fail(`metric name longer than ${MAX_NAME_CHARS} characters`);
    const name = line.slice(pos, nameEnd);
    pos = skipBlanks(line, nameEnd);
    const entries: Array<[string, string]> = [];
    if (line[pos] === '{') {
      pos++;
      const seen = new Set<string>();
      for (;;) {
        pos = skipBlanks(line, pos);
        if (line[pos] === '}') break;
        const labelEnd = scanName(line, pos, false);
        if (labelEnd === pos) fail('expected a label name');
        if (labelEnd - pos > MAX_NAME_CHARS) fail(`label name longer than ${MAX_NAME_CHARS} characters`);
        const label = line.slice(pos, labelEnd);
        if (seen.has(label)) fail(`label ${label} twice`);
        if (seen.size >= MAX_LABELS) fail(`more than ${MAX_LABELS} labels`);
        seen.add(label);
        pos = skipBlanks(line, labelEnd);
        if (line[pos] !== '=') fail('expected =');
        pos = skipBlanks(line, pos + 1);
        if (line[pos] !== '"') fail('expected "');
        pos++;
        const valueStart = pos;
        let value = '';
        for (;;) {
          const code = line.charCodeAt(pos);
          if (Number.isNaN(code)) fail('unterminated label value');
          if (code === 34 /* " */) break;
          if (code === 92 /* \ */) {
            const next = line[pos + 1];
            if (next === '\\') value += '\\';
            else if (next === '"') value += '"';
            else if (next === 'n') value += '\n';
            else fail(`invalid escape \\${next ?? ''}`);
            pos += 2;
          } else {
            const plainEnd = scanPlain(line, pos, MAX_LABEL_VALUE_CHARS + 1);
            value += line.slice(pos, plainEnd);
            pos = plainEnd;
          }
          if (pos - valueStart > 2 * MAX_LABEL_VALUE_CHARS || value.length > MAX_LABEL_VALUE_CHARS) {
            fail(`label value longer than ${MAX_LABEL_VALUE_CHARS} characters`);
          }
        }
        pos++;
        entries.push([label, value]);
        pos = skipBlanks(line, pos);
        if (line[pos] === ',') {
          pos++;
          continue;
        }
        if (line[pos] !== '}') fail('expected , or }');
      }
      pos = skipBlanks(line, pos + 1);
    } else if (pos === nameEnd) {
      fail('expected a blank after the metric name');
    }
    const valueEnd = scanToken(line, pos);
    if (valueEnd === pos) fail('expected a value');
    const valueText = line.slice(pos, valueEnd);
    const value = readGoFloat(valueText);
    if (value === undefined) fail(`invalid value ${quoteShort(valueText)}`);
    pos = skipBlanks(line, valueEnd);
    if (pos < line.length && line.charCodeAt(pos) !== 35 /* # */) {
      const timestampEnd = scanToken(line, pos);
      const timestamp = line.slice(pos, timestampEnd);
      if (!isTimestamp(timestamp)) fail(`invalid timestamp ${quoteShort(timestamp)}`);
      pos = skipBlanks(line, timestampEnd);
    }
    if (pos < line.length && !isExemplarStart(line, pos)) fail('expected a value, an optional timestamp and an optional exemplar');
    return { name, labels: Object.fromEntries(entries), value: value as number };
  }

  private unescapeHelp(text: string): string {
    if (!text.includes('\\')) return text;
    let out = '';
    for (let pos = 0; pos < text.length; pos++) {
      const char = text[pos] as string;
      if (char !== '\\') {
        out += char;
        continue;
      }
      const next = text[++pos];
      if (next === '\\') out += '\\';
      else if (next === 'n') out += '\n';
      // OpenMetrics escapes a double quote in HELP too (prometheus_client does).
      else if (next === '"') out += '"';
      else this.fail(`invalid escape \\${next ?? ''} in HELP`);
    }
    return out;
  }
}

/** The type prometheus_client prints an OpenMetrics family as in the 0.0.4 text (a gauge histogram, never stored, aside). */
function textType(type: ReadType | undefined): ParsedType {
  if (type === 'info' || type === 'stateset') return 'gauge';
  return type === undefined || type === 'gaugehistogram' ? 'untyped' : type;
}

function belongs(family: MutableFamily, sampleName: string): boolean {
  if (sampleName === family.name) return family.type !== 'histogram' && family.type !== 'gaugehistogram' && family.type !== 'info';
  const suffix = sampleName.startsWith(family.name) ? sampleName.slice(family.name.length) : undefined;
  switch (family.type) {
    case 'histogram':
      return suffix === '_bucket' || suffix === '_count' || suffix === '_sum';
    case 'gaugehistogram':
      return suffix === '_bucket' || suffix === '_gcount' || suffix === '_gsum';
    case 'info':
      return suffix === '_info';
    case 'summary':
      return suffix === '_count' || suffix === '_sum';
    case 'counter':
      // A TYPE line without `_total` (OpenMetrics-style stem) still owns its `_total` samples.
      return suffix === '_total';
    default:
      return false;
  }
}

/** An OpenMetrics exemplar at `pos` (after a blank): `# {`, its label set then a value and an optional timestamp. */
function isExemplarStart(line: string, pos: number): boolean {
  return line.charCodeAt(pos) === 35 /* # */ && isBlank(line.charCodeAt(pos + 1)) && line.charCodeAt(skipBlanks(line, pos + 1)) === 123; /* { */
}

function isBlank(code: number): boolean {
  return code === 32 || code === 9;
}

function skipBlanks(line: string, start: number): number {
  let pos = start;
  while (pos < line.length && isBlank(line.charCodeAt(pos))) pos++;
  return pos;
}

/** The end of a run of characters up to the next blank. */
function scanToken(line: string, start: number): number {
  let pos = start;
  while (pos < line.length && !isBlank(line.charCodeAt(pos))) pos++;
  return pos;
}

/** The end of a run of label-value characters that need no unescaping, at most `limit` long. */
function scanPlain(line: string, start: number, limit: number): number {
  let pos = start;
  const end = Math.min(line.length, start + limit);
  while (pos < end) {
    const code = line.charCodeAt(pos);
    if (code === 34 || code === 92) break;
    pos++;
  }
  return pos;
}

function scanName(line: string, start: number, metric: boolean): number {
  let pos = start;
  while (pos < line.length) {
    const code = line.charCodeAt(pos);
    const letter = (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || (metric && code === 58);
    const digit = code >= 48 && code <= 57;
    if (!letter && !(digit && pos > start)) break;
    pos++;
  }
  return pos;
}

function isMetricName(name: string): boolean {
  return name.length <= MAX_NAME_CHARS && scanName(name, 0, true) === name.length;
}

/** A token for an error message: quoted, and cut short (an error must not carry 16 MiB). */
function quoteShort(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
