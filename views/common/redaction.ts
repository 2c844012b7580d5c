/**
 * How URLs and header values appear in the package's words: every warning, thrown option error and
 * report that names an endpoint goes through these, so a password in a URL or a token in a header
 * never reaches a log line. A URL's userinfo (`user:password@`) is printed as `***@`; a header's
 * value as `<redacted>` (its name stays: it says which header is wrong).
 */

/** What stands for a URL's userinfo. */
export const REDACTED_USERINFO = '***';
/** What stands for a header's value. */
export const REDACTED_VALUE = '<redacted>';

/** A parsed URL as a message prints it: its userinfo, when it has one, replaced by `***`. */
export function redactedUrl(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  return `${url.protocol}//${REDACTED_USERINFO}@${url.host}${url.pathname}${url.search}${url.hash}`;
}

/**
 * One URL-like value as given (an option or variable, which may not even parse: `http://u:p@h:bad`,
 * a gRPC `user:pass@host:4317`): a URL the URL API reads is printed as `redactedUrl` prints it;
 * otherwise everything between its scheme (or its start) and its last `@` is replaced by `***`,
 * which may hide a path's `@` too but never leaves part of a password that holds a `/`, `?`, `#`
 * or blank.
 */
export function redactedUrlText(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const scheme = value.indexOf('://');
  if (scheme > 0) {
    try {
      return redactedUrl(new URL(value));
    } catch {
      // Not a URL the API reads: redacted as text below.
    }
  }
  const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
  return `${value.slice(0, start)}${REDACTED_USERINFO}${value.slice(at)}`;
}

/**
 * Free text (an error's message, which may quote a URL) with every blank- or quote-delimited word
 * that holds an `@` redacted as `redactedUrlText` redacts one value. A URL quoted as the URL API
 * prints it has its blanks and quotes percent-encoded, so its userinfo is one word. Linear in the
 * text's length.
 */
export function withUrlsRedacted(text: string): string {
  if (!text.includes('@')) return text;
  let out = '';
  let wordStart = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !isWordEnd(text.charCodeAt(i))) continue;
    const word = text.slice(wordStart, i);
    out += word.includes('@') ? redactedUrlText(word) : word;
    if (i < text.length) out += text[i];
    wordStart = i + 1;
  }
  return out;
}

/** Blanks, double quotes, backticks and angle brackets: characters the URL API never leaves unescaped. */
function isWordEnd(code: number): boolean {
  return code <= 32 || code === 34 || code === 96 || code === 60 || code === 62;
}

/** Header names with every value replaced: what a message may say of a headers option. */
export function redactedHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, REDACTED_VALUE]));
}

/**
 * A `key=value,key=value` header list as `OTEL_EXPORTER_OTLP_HEADERS` holds it, every value
 * replaced; an entry without `=`, or whose key is no header name (`Bearer abc=…`), may be a bare
 * token and is replaced whole.
 */
export function redactedHeaderList(raw: string): string {
  return raw
    .split(',')
    .map((entry) => {
      if (entry.trim() === '') return entry;
      const equals = entry.indexOf('=');
      const key = equals < 0 ? '' : entry.slice(0, equals);
      return HEADER_NAME.test(key.trim()) ? `${key}=${REDACTED_VALUE}` : REDACTED_VALUE;
    })
    .join(',');
}

/** An HTTP field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
