import { readdirSync, readFileSync } from 'node:fs';

/** How the process collector reads `/proc`: the real files, or a stand-in in tests. */
export interface ProcReader {
  readFile(path: string): string;
  readDir(path: string): readonly string[];
}

/**
 * The real `/proc`. Reads are synchronous, as prometheus_client's and libuv's own are: procfs
 * files are rendered from kernel memory on read and never wait on a disk.
 */
export const SYSTEM_PROC: ProcReader = {
  readFile: (path) => readFileSync(path, 'latin1'),
  readDir: (path) => readdirSync(path),
};
