import { join } from 'node:path';
import type * as Root from '../index';

const DIST = join(__dirname, '..', 'dist');

/**
 * A module of the package as users run it: tsc's CommonJS build in dist/ (`npm run bench` builds
 * it first), not the sources through tsx, whose module interop reads every imported binding
 * through a getter on each call and so would slow the record path the bench measures.
 */
export function builtModule<T>(relativePath: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(join(DIST, relativePath)) as T;
}

/** The package's root export, built. */
export function builtPackage(): typeof Root {
  return builtModule<typeof Root>('index.js');
}
