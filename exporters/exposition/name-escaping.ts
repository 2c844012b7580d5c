import { LABEL_NAME_PATTERN, METRIC_NAME_PATTERN, prometheusLabelName, prometheusMetricName } from '../../views/catalog/names';

/**
 * How names that are not legacy Prometheus names (`a-zA-Z0-9_:`, not starting with a digit) are
 * printed, as a scraper asks with `escaping=` in its `Accept` header (Prometheus 3). Legacy names,
 * every name of the catalog among them, print unchanged under every scheme, as prometheus/common's
 * `EscapeMetricFamily` leaves them. Others:
 * - `underscores` (also the answer to `allow-utf-8`, and with no scheme asked): each invalid
 *   character becomes `_` (`http.server.duration` → `http_server_duration`), as the package has
 *   always printed them;
 * - `dots`: `.` becomes `_dot_`, `_` becomes `__`, any other invalid character `__`
 *   (`http_server.duration` → `http__server_dot_duration`), which Prometheus can read back;
 * - `values`: `U__`, then `_` as `__` and each other invalid character as `_<hex code point>_`.
 */
export type NameEscaping = 'underscores' | 'dots' | 'values';

/** The schemes a scraper may ask for, as Prometheus spells them. */
export const ESCAPING_SCHEMES = ['allow-utf-8', 'underscores', 'dots', 'values'] as const;
export type EscapingScheme = (typeof ESCAPING_SCHEMES)[number];

/** The escaping the bytes follow for a scheme asked for: the package prints legacy names under `allow-utf-8`. */
export function nameEscapingFor(scheme: EscapingScheme | undefined): NameEscaping {
  return scheme === 'dots' || scheme === 'values' ? scheme : 'underscores';
}

/** A metric name (or a counter's stem) as `escaping` prints it. */
export function escapedMetricName(name: string, escaping: NameEscaping): string {
  if (METRIC_NAME_PATTERN.test(name)) return name;
  return escaping === 'underscores' ? prometheusMetricName(name) : escapeInvalid(name, escaping, isMetricNameCharacter);
}

/** A label name as `escaping` prints it. */
export function escapedLabelName(name: string, escaping: NameEscaping): string {
  if (LABEL_NAME_PATTERN.test(name)) return name;
  return escaping === 'underscores' ? prometheusLabelName(name) : escapeInvalid(name, escaping, isLabelNameCharacter);
}

function escapeInvalid(name: string, escaping: 'dots' | 'values', valid: (character: string, first: boolean) => boolean): string {
  let out = escaping === 'values' ? 'U__' : '';
  let first = true;
  for (const character of name) {
    if (character === '_') out += '__';
    else if (escaping === 'dots' && character === '.') out += '_dot_';
    else if (valid(character, first)) out += character;
    else if (escaping === 'dots') out += '__';
    else out += `_${codePointOf(character).toString(16)}_`;
    first = false;
  }
  return out;
}

/** A lone surrogate counts as U+FFFD, as Go reads invalid UTF-8. */
function codePointOf(character: string): number {
  const point = character.codePointAt(0) as number;
  return point >= 0xd800 && point <= 0xdfff ? 0xfffd : point;
}

function isMetricNameCharacter(character: string, first: boolean): boolean {
  return /^[a-zA-Z_:]$/.test(character) || (!first && /^[0-9]$/.test(character));
}

function isLabelNameCharacter(character: string, first: boolean): boolean {
  return /^[a-zA-Z_]$/.test(character) || (!first && /^[0-9]$/.test(character));
}
