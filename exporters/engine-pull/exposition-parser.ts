import { LABEL_NAME_PATTERN, METRIC_NAME_PATTERN } from '../../views/names';

/**
 * A strict parser of the Prometheus text format 0.0.4, as a vLLM server's `/metrics` prints it
 * (Python prometheus_client). It takes outside input, so it accepts only well-formed text and
 * rejects the rest with the line number: a duplicate HELP / TYPE, a family split in two groups, a
 * duplicate sample, a bad escape, a value that is not a Go float. Nothing in it grows beyond the
 * size of its input.
 *
 * Why not a library: `parse-prometheus-text-format` (the only maintained-looking npm option, last
 * release 1.1.1) drops the labels, `_count` and `_sum` of histograms whose names contain colons
 * (every `vllm:*` histogram), keeps values as strings and does not reject malformed input.
 */

export type ParsedType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface ParsedSample {
  /** The sample's own name (`vllm:e2e_request_latency_seconds_bucket`). */
  readonly name: string;
  /** Label values unescaped; a plain data object (built with `Object.fromEntries`). */
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  /** The name of the TYPE line (counters: with `_total`, as prometheus_client prints it), or of the sample for untyped ones. */
  readonly name: string;
  readonly type: ParsedType;
  /** HELP unescaped; `''` when the family has none. */
  readonly help: string;
  readonly samples: readonly ParsedSample[];
}

export class ExpositionParseError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'ExpositionParseError';
  }
}

const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TIMESTAMP = /^-?\d+$/;

interface MutableFamily {
  readonly name: string;
  type: ParsedType | undefined;
  help: string | undefined;
  readonly samples: ParsedSample[];
  readonly keys: Set<string>;
}

/** Parses a whole exposition; throws `ExpositionParseError` on anything malformed. */
export function parseExposition(text: string): ParsedFamily[] {
  const families = new Map<string, MutableFamily>();
  let current: MutableFamily | undefined;
  const lines = text.split('\n');
  // A final newline leaves one empty string behind; other empty lines are allowed too.
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const lineNumber = index + 1;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const metadata = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t](.*))?$/.exec(line);
      if (metadata === null) continue; // a comment
      const [, keyword, name, rest = ''] = metadata as unknown as [string, 'HELP' | 'TYPE', string, string | undefined];
      if (!METRIC_NAME_PATTERN.test(name)) throw new ExpositionParseError(`invalid metric name ${JSON.stringify(name)} in ${keyword}`, lineNumber);
      const family = families.get(name) ?? newFamily(families, name);
      if (family !== current && family.samples.length > 0) throw new ExpositionParseError(`${keyword} for ${name} after its samples`, lineNumber);
      if (keyword === 'HELP') {
        if (family.help !== undefined) throw new ExpositionParseError(`second HELP for ${name}`, lineNumber);
        family.help = unescapeHelp(rest, lineNumber);
      } else {
        if (family.type !== undefined) throw new ExpositionParseError(`second TYPE for ${name}`, lineNumber);
        const type = rest.trim();
        if (!TYPES.has(type)) throw new ExpositionParseError(`unknown type ${JSON.stringify(type)} for ${name}`, lineNumber);
        if (family.samples.length > 0) throw new ExpositionParseError(`TYPE for ${name} after its samples`, lineNumber);
        family.type = type as ParsedType;
      }
      current = family;
      continue;
    }
    const sample = parseSampleLine(line, lineNumber);
    const family = familyOfSample(families, current, sample.name);
    if (family !== current && family.samples.length > 0) {
      throw new ExpositionParseError(`samples of ${family.name} are not in one group`, lineNumber);
    }
    checkSample(family, sample, lineNumber);
    family.samples.push(sample);
    current = family;
  }
  return [...families.values()].map(({ name, type, help, samples }) => ({ name, type: type ?? 'untyped', help: help ?? '', samples }));
}

function newFamily(families: Map<string, MutableFamily>, name: string): MutableFamily {
  const family: MutableFamily = { name, type: undefined, help: undefined, samples: [], keys: new Set() };
  families.set(name, family);
  return family;
}

/** The family a sample belongs to: the current one when the name is one of its sample names, else its own (untyped) one. */
function familyOfSample(families: Map<string, MutableFamily>, current: MutableFamily | undefined, sampleName: string): MutableFamily {
  if (current !== undefined && belongs(current, sampleName)) return current;
  const existing = families.get(sampleName);
  if (existing !== undefined) return existing;
  return newFamily(families, sampleName);
}

function belongs(family: MutableFamily, sampleName: string): boolean {
  if (sampleName === family.name) return family.type !== 'histogram';
  const suffix = sampleName.startsWith(family.name) ? sampleName.slice(family.name.length) : undefined;
  switch (family.type) {
    case 'histogram':
      return suffix === '_bucket' || suffix === '_count' || suffix === '_sum';
    case 'summary':
      return suffix === '_count' || suffix === '_sum';
    case 'counter':
      // A TYPE line without `_total` (OpenMetrics-style stem) still owns its `_total` samples.
      return suffix === '_total';
    default:
      return false;
  }
}

function checkSample(family: MutableFamily, sample: ParsedSample, lineNumber: number): void {
  const isBucket = family.type === 'histogram' && sample.name.endsWith('_bucket');
  if (isBucket && sample.labels.le === undefined) throw new ExpositionParseError(`${sample.name} without an le label`, lineNumber);
  if (isBucket) parseFloatText(sample.labels.le as string, lineNumber, 'le');
  if (family.type === 'summary' && sample.name === family.name && sample.labels.quantile === undefined) {
    throw new ExpositionParseError(`${sample.name} without a quantile label`, lineNumber);
  }
  const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;
  if (family.keys.has(key)) throw new ExpositionParseError(`duplicate sample ${sample.name} with the same labels`, lineNumber);
  family.keys.add(key);
}

/** `name{a="x",b="y"} value [timestamp]`, blanks allowed between tokens as Prometheus allows them. */
function parseSampleLine(line: string, lineNumber: number): ParsedSample {
  let pos = 0;
  const fail = (what: string): never => {
    throw new ExpositionParseError(`${what} at column ${pos + 1}`, lineNumber);
  };
  const skipBlanks = (): void => {
    while (line[pos] === ' ' || line[pos] === '\t') pos++;
  };
  const nameEnd = scanName(line, pos, true);
  if (nameEnd === pos) fail('expected a metric name');
  const name = line.slice(pos, nameEnd);
  pos = nameEnd;
  skipBlanks();
  const entries: Array<[string, string]> = [];
  if (line[pos] === '{') {
    pos++;
    const seen = new Set<string>();
    for (;;) {
      skipBlanks();
      if (line[pos] === '}') break;
      const labelEnd = scanName(line, pos, false);
      if (labelEnd === pos) fail('expected a label name');
      const label = line.slice(pos, labelEnd);
      if (!LABEL_NAME_PATTERN.test(label)) fail(`invalid label name ${JSON.stringify(label)}`);
      if (seen.has(label)) fail(`label ${label} twice`);
      seen.add(label);
      pos = labelEnd;
      skipBlanks();
      if (line[pos] !== '=') fail('expected =');
      pos++;
      skipBlanks();
      if (line[pos] !== '"') fail('expected "');
      pos++;
      let value = '';
      for (;;) {
        const char = line[pos];
        if (char === undefined) fail('unterminated label value');
        if (char === '"') break;
        if (char === '\\') {
          const next = line[pos + 1];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else fail(`invalid escape \\${next ?? ''}`);
          pos += 2;
          continue;
        }
        value += char;
        pos++;
      }
      pos++;
      entries.push([label, value]);
      skipBlanks();
      if (line[pos] === ',') {
        pos++;
        continue;
      }
      if (line[pos] !== '}') fail('expected , or }');
    }
    pos++;
    skipBlanks();
  } else if (pos === nameEnd) {
    fail('expected a blank after the metric name');
  }
  const rest = line
    .slice(pos)
    .split(/[ \t]+/)
    .filter((token) => token !== '');
  if (rest.length === 0 || rest.length > 2) fail('expected a value and an optional timestamp');
  const value = parseFloatText(rest[0] as string, lineNumber, 'value');
  if (rest[1] !== undefined && !TIMESTAMP.test(rest[1])) fail(`invalid timestamp ${JSON.stringify(rest[1])}`);
  return { name, labels: Object.fromEntries(entries), value };
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

/** A Go float as Prometheus reads it: decimals, exponents, `±Inf`, `NaN` (case-insensitive, as Go's ParseFloat). */
export function parseFloatText(text: string, lineNumber: number, what: string): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf' || lower === '+infinity' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (lower === 'nan') return NaN;
  if (!FLOAT.test(text)) throw new ExpositionParseError(`invalid ${what} ${JSON.stringify(text)}`, lineNumber);
  return Number(text);
}

function unescapeHelp(text: string, lineNumber: number): string {
  return text.replace(/\\(.?)/g, (_match, next: string) => {
    if (next === '\\') return '\\';
    if (next === 'n') return '\n';
    throw new ExpositionParseError(`invalid escape \\${next} in HELP`, lineNumber);
  });
}
