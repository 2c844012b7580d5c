import { types } from 'node:util';
import { LimitedWarning } from '../../views/common/diag-warnings';
import { isThenable } from '../../views/common/thenable';
import { LABEL_NAME_PATTERN } from '../../views/catalog/names';
import { checkArray, checkObject, checkPositiveInteger, checkString, OmniOptionError, optionKeys, shown } from '../../views/common/option-checks';
import { MAX_REQUEST_LABELS, RESERVED_REQUEST_LABEL_NAMES } from '../../views/catalog/request-label-families';
import { isWellFormedText, wellFormedText } from '../../views/common/well-formed-text';

/** The request object a label's value is read from: what the host passed to `generate`. */
export type LabelledRequest = { readonly requestId: string; readonly [key: string]: unknown };

/**
 * One per-request label (a tenant, a priority class) on the request families. Its value comes
 * from `from` (a function over the request) or `header` (a header the serving layer passes on the
 * request's `headers`), and is bounded: a value in `values`, or one of the first `maxValues`
 * distinct values seen, keeps its own series; every other value, and a missing one, is
 * `otherValue`.
 */
export interface RequestLabelOptions {
  /** The label name, e.g. `tenant` or `priority`. */
  readonly name: string;
  /** Reads the value from the `generate` request (an OpenAI request's `user`, a routing field). */
  readonly from?: (request: LabelledRequest) => unknown;
  /** Or the value of this header on the request's `headers` (a plain object, or anything with `get(name)`); case-insensitive. */
  readonly header?: string;
  /** The allow-list: values that always keep their own series. */
  readonly values?: readonly string[];
  /** Besides the allow-list, the first this-many distinct values seen keep their own series (their series are never moved: counters stay monotonic). */
  readonly maxValues?: number;
  /** What every other value is recorded as; default `other`. */
  readonly otherValue?: string;
}

/** One request label, checked. */
export interface RequestLabelSettings {
  readonly name: string;
  readonly read: (request: LabelledRequest) => unknown;
  readonly values: readonly string[];
  readonly maxValues: number;
  readonly otherValue: string;
}

export const DEFAULT_OTHER_VALUE = 'other';
/** A longer value is an identifier, not a tenant: it is recorded as the other value. */
export const MAX_REQUEST_LABEL_VALUE_LENGTH = 128;

const LABEL_KEYS = optionKeys<RequestLabelOptions>({ name: true, from: true, header: true, values: true, maxValues: true, otherValue: true });

/**
 * Checks the `requestLabels` option: one or two labels, each with one source and a bound whose
 * series (its values and `otherValue`) fit in `cardinalityLimit`. Throws an `OmniOptionError`
 * naming the option.
 */
export function resolveRequestLabels(option: unknown, cardinalityLimit: number): readonly RequestLabelSettings[] {
  if (option === undefined) return [];
  checkArray(option, 'requestLabels');
  const labels = option as readonly unknown[];
  if (labels.length === 0 || labels.length > MAX_REQUEST_LABELS) {
    throw new OmniOptionError(
      'requestLabels',
      `requestLabels must list 1 or ${MAX_REQUEST_LABELS} labels (each multiplies the request families' series); got ${labels.length}`,
    );
  }
  const resolved = labels.map((label, i) => resolveLabel(label, `requestLabels[${i}]`, cardinalityLimit));
  if (resolved.length === 2 && resolved[0]?.name === resolved[1]?.name) {
    throw new OmniOptionError('requestLabels[1].name', `requestLabels[1].name repeats ${JSON.stringify(resolved[1]?.name)}`);
  }
  return resolved;
}

function resolveLabel(value: unknown, path: string, cardinalityLimit: number): RequestLabelSettings {
  checkObject(value, path, LABEL_KEYS);
  const label = value as RequestLabelOptions;
  const name = label.name;
  if (typeof name !== 'string' || !LABEL_NAME_PATTERN.test(name) || name.startsWith('__')) {
    throw new OmniOptionError(
      `${path}.name`,
      `${path}.name must be a Prometheus label name (${LABEL_NAME_PATTERN.source}, not starting with __); got ${shown(name)}`,
    );
  }
  if (RESERVED_REQUEST_LABEL_NAMES.includes(name)) {
    throw new OmniOptionError(
      `${path}.name`,
      `${path}.name ${JSON.stringify(name)} is taken (by the request families' own labels or the exposition); choose another, e.g. "tenant"`,
    );
  }
  if ((label.from === undefined) === (label.header === undefined)) {
    throw new OmniOptionError(path, `${path} needs exactly one source: from (a function over the generate request) or header (a header name)`);
  }
  if (label.from !== undefined && typeof label.from !== 'function') {
    throw new OmniOptionError(`${path}.from`, `${path}.from must be a function (request) => value; got ${shown(label.from)}`);
  }
  if (types.isAsyncFunction(label.from)) {
    throw new OmniOptionError(
      `${path}.from`,
      `${path}.from must return the value itself, not a promise: the label is read when generate is called, before the request's first record; ` +
        'read what it needs before calling generate and pass it on the request',
    );
  }
  checkString(label.header, `${path}.header`);
  checkPositiveInteger(label.maxValues, `${path}.maxValues`);
  const otherValue = label.otherValue ?? DEFAULT_OTHER_VALUE;
  if (!isLabelValue(otherValue)) throw new OmniOptionError(`${path}.otherValue`, `${path}.otherValue must be ${VALUE_RULE}; got ${shown(otherValue)}`);
  const values = checkValues(label.values, `${path}.values`, otherValue);
  if (values.length === 0 && label.maxValues === undefined) {
    throw new OmniOptionError(path, `${path} needs a bound: values (an allow-list), maxValues (the first distinct values seen), or both`);
  }
  const maxValues = label.maxValues ?? 0;
  const series = values.length + maxValues + 1;
  if (series > cardinalityLimit) {
    throw new OmniOptionError(
      label.maxValues === undefined ? `${path}.values` : `${path}.maxValues`,
      `${path} allows ${series} values (values, maxValues and ${JSON.stringify(otherValue)}), more than cardinalityLimit (${cardinalityLimit}) series per family`,
    );
  }
  return { name, read: label.from ?? headerReader(label.header as string), values, maxValues, otherValue };
}

const VALUE_RULE = `a non-empty string of at most ${MAX_REQUEST_LABEL_VALUE_LENGTH} characters, without lone surrogates`;

function isLabelValue(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_REQUEST_LABEL_VALUE_LENGTH && isWellFormedText(value);
}

function checkValues(value: unknown, path: string, otherValue: string): readonly string[] {
  if (value === undefined) return [];
  checkArray(value, path);
  const values = value as readonly unknown[];
  values.forEach((entry, i) => {
    if (!isLabelValue(entry)) throw new OmniOptionError(`${path}[${i}]`, `${path}[${i}] must be ${VALUE_RULE}; got ${shown(entry)}`);
    if (entry === otherValue) throw new OmniOptionError(`${path}[${i}]`, `${path}[${i}] is the other value ${JSON.stringify(otherValue)}`);
    if (values.indexOf(entry) !== i) throw new OmniOptionError(`${path}[${i}]`, `${path}[${i}] repeats ${JSON.stringify(entry)}`);
  });
  return Object.freeze([...(values as readonly string[])]);
}

/** Reads one header from `request.headers`: Node's lower-cased object (a repeated header's first value), or a `Headers` / `Map`. */
function headerReader(header: string): (request: LabelledRequest) => unknown {
  const lower = header.toLowerCase();
  return (request) => {
    const headers = request.headers as { get?: unknown; [name: string]: unknown } | null | undefined;
    if (typeof headers !== 'object' || headers === null) return undefined;
    const found =
      typeof headers.get === 'function'
        ? (headers.get as (name: string) => unknown)(lower)
        : (headers[lower] ?? headers[header] ?? spelledOtherwise(headers, lower));
    return Array.isArray(found) ? found[0] : found;
  };
}

/** A header object built by hand keeps its own spelling (`{ 'X-Priority': 'low' }`): the value under any case of the name. */
function spelledOtherwise(headers: Record<string, unknown>, lower: string): unknown {
  const key = Object.keys(headers).find((name) => name.toLowerCase() === lower);
  return key === undefined ? undefined : headers[key];
}

/**
 * Turns requests into bounded label values. Each label keeps the values it admitted (at most its
 * `maxValues`); a value is admitted the first time it is seen while there is room, and keeps its
 * series from then on. Memory is bounded by the allow-list and `maxValues`, whatever the traffic.
 */
export class RequestLabeler {
  private readonly labels: readonly LabelBound[];
  private readonly others: readonly string[];
  /** A source is running: one that calls back into the host (another `generate`) gets the other values, never a loop. */
  private reading = false;

  constructor(settings: readonly RequestLabelSettings[]) {
    this.labels = settings.map((label) => new LabelBound(label));
    this.others = Object.freeze(settings.map((label) => label.otherValue));
  }

  get names(): readonly string[] {
    return this.labels.map((label) => label.settings.name);
  }

  /**
   * The label values of one request, in the option's order; never throws (a source that throws,
   * or returns a promise, gives the other value).
   */
  valuesOf(request: unknown): readonly string[] {
    if (this.reading) return this.others;
    this.reading = true;
    try {
      return this.labels.map((label) => label.valueOf(request));
    } finally {
      this.reading = false;
    }
  }
}

class LabelBound {
  private readonly allowed: ReadonlySet<string>;
  private readonly admitted = new Set<string>();

  constructor(readonly settings: RequestLabelSettings) {
    this.allowed = new Set(settings.values);
  }

  valueOf(request: unknown): string {
    let raw: unknown;
    try {
      raw = typeof request === 'object' && request !== null ? this.settings.read(request as LabelledRequest) : undefined;
      if (isThenable(raw)) return this.settled(raw);
    } catch {
      // A source that throws is the user's bug, not the host's: the request counts under the other value.
      return this.settings.otherValue;
    }
    // Made well-formed before it is admitted: values that would print alike take one place and one series.
    const text = typeof raw === 'string' ? wellFormedText(raw) : typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
    if (text === undefined || !isLabelValue(text) || text === this.settings.otherValue) return this.settings.otherValue;
    if (this.allowed.has(text) || this.admitted.has(text)) return text;
    if (this.admitted.size < this.settings.maxValues) {
      this.admitted.add(text);
      return text;
    }
    return this.settings.otherValue;
  }

  /**
   * A source that returned a promise (a function that is not `async` yet returns one): its
   * outcome is handled here, so that a rejection cannot end the host's process, and the request
   * counts under the other value.
   */
  private settled(promise: PromiseLike<unknown>): string {
    try {
      promise.then(undefined, ignoreRejection);
    } catch {
      // A thenable whose `then` throws has nothing left to reject.
    }
    promisedValues.warn(
      `requestLabels ${JSON.stringify(this.settings.name)}: its source returned a promise; a label's value must be known when generate is called, so such requests count as ${JSON.stringify(this.settings.otherValue)}`,
    );
    return this.settings.otherValue;
  }
}

const promisedValues = new LimitedWarning();

function ignoreRejection(): void {
  // The source's own failure: the request already counts under the other value.
}
