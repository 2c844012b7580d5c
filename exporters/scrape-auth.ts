import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { checkObject } from '../views/common/option-checks';

/**
 * Credentials a scrape must present, as Prometheus's scrape config sends them
 * (`authorization: { credentials }` or `basic_auth: { username, password }`). Either or both.
 */
export interface ScrapeAuth {
  /** `Authorization: Bearer <token>`. */
  readonly bearerToken?: string;
  /** `Authorization: Basic base64(username:password)`. */
  readonly basic?: { readonly username: string; readonly password: string };
}

/** Checks the option's shape once; throws naming the option. */
export function validateScrapeAuth(auth: ScrapeAuth | undefined, option: string): void {
  if (auth === undefined) return;
  if (typeof auth !== 'object' || auth === null) throw new TypeError(`${option} must be an object with bearerToken and/or basic`);
  checkObject(auth, option, ['bearerToken', 'basic']);
  if (auth.basic !== undefined) checkObject(auth.basic, `${option}.basic`, ['username', 'password']);
  const { bearerToken, basic } = auth;
  if (bearerToken === undefined && basic === undefined) throw new TypeError(`${option} needs bearerToken or basic`);
  if (bearerToken !== undefined && (typeof bearerToken !== 'string' || bearerToken === ''))
    throw new TypeError(`${option}.bearerToken must be a non-empty string`);
  if (basic !== undefined) {
    if (typeof basic !== 'object' || basic === null || typeof basic.username !== 'string' || basic.username === '' || basic.username.includes(':')) {
      throw new TypeError(`${option}.basic.username must be a non-empty string without ':'`);
    }
    if (typeof basic.password !== 'string') throw new TypeError(`${option}.basic.password must be a string`);
  }
}

/** Whether the request carries one of the configured credentials (compared in constant time). */
export function isAuthorized(auth: ScrapeAuth, headers: IncomingHttpHeaders): boolean {
  const header = headers.authorization ?? '';
  const space = header.indexOf(' ');
  const scheme = header.slice(0, space).toLowerCase();
  const credentials = header.slice(space + 1).trim();
  if (scheme === 'bearer' && auth.bearerToken !== undefined) return sameSecret(credentials, auth.bearerToken);
  if (scheme === 'basic' && auth.basic !== undefined) {
    return sameSecret(Buffer.from(credentials, 'base64').toString('utf8'), `${auth.basic.username}:${auth.basic.password}`);
  }
  return false;
}

/** The `WWW-Authenticate` challenges a 401 names. */
export function challenges(auth: ScrapeAuth): string[] {
  return [
    ...(auth.bearerToken !== undefined ? ['Bearer realm="metrics"'] : []),
    ...(auth.basic !== undefined ? ['Basic realm="metrics", charset="UTF-8"'] : []),
  ];
}

/** Compares digests, so neither the secret's length nor its content leaks through timing. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
