import type { ExpositionFormat } from './exposition/exposition-text';
import { ESCAPING_SCHEMES, type EscapingScheme } from './exposition/name-escaping';

/** One entry of an `Accept` / `Accept-Encoding` header: `type/subtype;param=…;q=0.5`. */
interface Preference {
  readonly value: string;
  readonly q: number;
}

/** Splits a header into its entries with their quality (`q`, default 1; malformed → 0, i.e. not acceptable). */
function preferences(header: string | undefined): Preference[] {
  if (header === undefined || header.trim() === '') return [];
  return header.split(',').map((entry) => {
    const [value = '', ...parameters] = entry.split(';').map((part) => part.trim());
    const quality = parameters.find((parameter) => /^q=/i.test(parameter));
    const q = quality === undefined ? 1 : Number(quality.slice(2));
    return { value: value.toLowerCase(), q: Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0 };
  });
}

/** The highest quality any matching entry gives, or undefined when none matches. */
function quality(entries: readonly Preference[], matches: (value: string) => boolean): number | undefined {
  let best: number | undefined;
  for (const entry of entries) if (matches(entry.value)) best = Math.max(best ?? 0, entry.q);
  return best;
}

/**
 * OpenMetrics when the scraper prefers it (by `q`) over the 0.0.4 text format, which is what
 * every other `Accept` gets: a missing or unsatisfiable header, `*\/*`, `text/plain`. Prometheus
 * asks `application/openmetrics-text;version=1.0.0;q=0.5,…,text/plain;version=0.0.4;q=0.3,*\/*;q=0.2`.
 */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  const entries = preferences(accept);
  const openMetrics = quality(entries, (value) => value === 'application/openmetrics-text') ?? 0;
  const text = quality(entries, (value) => value === 'text/plain' || value === 'text/*' || value === '*/*') ?? 0;
  return openMetrics > 0 && openMetrics >= text ? 'openmetrics' : 'text';
}

/**
 * How `/metrics` picks its format: `negotiate` answers OpenMetrics to a scraper that prefers it
 * (exemplars, `_created` as OpenMetrics carries it); `text` answers the 0.0.4 text whatever the
 * `Accept` header, as vLLM's `/metrics` does.
 */
export type ExpositionChoice = 'negotiate' | 'text';

export const EXPOSITION_CHOICES: readonly ExpositionChoice[] = ['negotiate', 'text'];

/** The format a scrape with this `Accept` header gets under `choice`. */
export function chooseFormat(choice: ExpositionChoice | undefined, accept: string | undefined): ExpositionFormat {
  return choice === 'text' ? 'text' : negotiateFormat(accept);
}

/** Whether the response may be gzip-compressed: `gzip` (or `*`) with a quality above 0. */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  const entries = preferences(acceptEncoding);
  const gzip = quality(entries, (value) => value === 'gzip' || value === 'x-gzip');
  return (gzip ?? quality(entries, (value) => value === '*') ?? 0) > 0;
}

/**
 * The `escaping=` scheme a scraper asked for with `mediaType` (e.g. `application/openmetrics-text`):
 * its highest-`q` entry of that type that names one. A scheme Prometheus does not define is read
 * as `underscores`. Undefined when the scraper named none, whose answer names none, as
 * prometheus_client's does.
 */
export function askedEscaping(accept: string | undefined, mediaType: string): EscapingScheme | undefined {
  if (accept === undefined) return undefined;
  let best: { scheme: string; q: number } | undefined;
  for (const entry of accept.split(',')) {
    const [type = '', ...parameters] = entry.split(';').map((part) => part.trim());
    if (type.toLowerCase() !== mediaType) continue;
    const parameter = (name: string): string | undefined => parameters.find((one) => one.toLowerCase().startsWith(`${name}=`))?.slice(name.length + 1);
    const scheme = parameter('escaping');
    const q = Number(parameter('q') ?? 1);
    if (scheme !== undefined && q > 0 && q <= 1 && (best === undefined || q > best.q)) best = { scheme, q };
  }
  if (best === undefined) return undefined;
  return (ESCAPING_SCHEMES as readonly string[]).includes(best.scheme) ? (best.scheme as EscapingScheme) : 'underscores';
}
