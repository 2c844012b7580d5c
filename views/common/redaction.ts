/**
 * How URLs and header values appear in the package's words: every warning, thrown option error and
 * report that names an endpoint goes through these, so a password in a URL, a token in its query or
 * in a header never reaches a log line. A URL's userinfo (`user:password@`) is printed as `***@`,
 * each value of its query as `***` (`?access_token=***&tenant=***`: the keys stay, they say which
 * URL it is); a header's value as `<redacted>` (its name stays: it says which header is wrong).
 */

/** What stands for a URL's userinfo and for each value of its query. */
export const REDACTED_URL_PART = '***';
/** What stands for a header's value. */
export const REDACTED_VALUE = '<redacted>';

/** A parsed URL as a message prints it: its userinfo, when it has one, and its query's values replaced by `***`. */
export function redactedUrl(url: URL): string {
  const hasUserinfo = url.username !== '' || url.password !== '';
  if (!hasUserinfo && url.search === '') return url.href;
  const userinfo = hasUserinfo ? `${REDACTED_URL_PART}@` : '';
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${redactedQuery(url.search)}${url.hash}`;
}

/**
 * One URL-like value as given (an option or variable, which may not even parse: `http://u:p@h:bad`,
 * a gRPC `user:pass@host:4317`): a URL the URL API reads is printed as `redactedUrl` prints it;
 * otherwise everything between its scheme (or its start) and its last `@` is replaced by `***`,
 * which may hide a path's `@` too but never leaves part of a password that holds a `/`, `?`, `#`
 * or blank, and the query after that (up to a `#`) has its values replaced.
 */
export function redactedUrlText(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0 && !value.includes('?')) return value;
  const scheme = value.indexOf('://');
  if (scheme > 0) {
    try {
      return redactedUrl(new URL(value));
    } catch {
      // Not a URL the API reads: redacted as text below.
    }
  }
  const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
  const withoutUserinfo = at < 0 ? value : `${value.slice(0, start)}${REDACTED_URL_PART}${value.slice(at)}`;
  // The query starts after the userinfo (a password may hold a `?`), which is `***@` by now.
  const query = withoutUserinfo.indexOf('?', at < 0 ? 0 : start + REDACTED_URL_PART.length);
  if (query < 0) return withoutUserinfo;
  const fragment = withoutUserinfo.indexOf('#', query);
  const end = fragment < 0 ? withoutUserinfo.length : fragment;
  return `${withoutUserinfo.slice(0, query)}${redactedQuery(withoutUserinfo.slice(query, end))}${withoutUserinfo.slice(end)}`;
}

/** `?a=1&b` as `?a=***&***`: a value may be a token (`?api_key=`), and a part without `=` may be a bare one. */
function redactedQuery(search: string): string {
  if (search.length <= 1) return search;
  const parts = search.slice(1).split('&');
  return `?${parts
    .map((part) => {
      if (part === '') return part;
      const equals = part.indexOf('=');
      return equals < 0 ? REDACTED_URL_PART : `${part.slice(0, equals)}=${REDACTED_URL_PART}`;
    })
    .join('&')}`;
}

/**
 * Free text (an error's message, which may quote a URL) with every blank- or quote-delimited word
 * that holds an `@` or a `?` redacted as `redactedUrlText` redacts one value. A URL quoted as the
 * URL API prints it has its blanks and quotes percent-encoded, so its userinfo and its query are
 * one word each. Linear in the text's length.
 */
export function withUrlsRedacted(text: string): string {
  if (!text.includes('@') && !text.includes('?')) return text;
  let out = '';
  let wordStart = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !isWordEnd(text.charCodeAt(i))) continue;
    const word = text.slice(wordStart, i);
    out += word.includes('@') || word.includes('?') ? redactedUrlText(word) : word;
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
