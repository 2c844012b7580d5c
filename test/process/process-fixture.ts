import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcReader } from '../../instrumentation/process/proc-files';
import { resolveCatalog, type CatalogOptions } from '../../views/catalog/catalog';
import { SeriesStore } from '../../views/store/series-store';
import { debianPython } from '../support/python-parity';

const RENDER = join(__dirname, 'fixtures', 'process_collector_render.py');

export interface PythonExposition {
  readonly version: string;
  readonly text: string;
  readonly openmetrics: string;
}

/** prometheus_client's `ProcessCollector` alone, reading `proc` (a real or fake `/proc`), or `--order`. */
export function pythonProcessCollector(argument = '/proc'): PythonExposition {
  return JSON.parse(execFileSync(debianPython(), [RENDER, argument], { encoding: 'utf8' })) as PythonExposition;
}

/** A store over a catalog with the process families (and whatever else `catalog` turns on). */
export function processStore(catalog: CatalogOptions = {}): SeriesStore {
  return new SeriesStore(resolveCatalog({ processMetrics: true, ...catalog }), { modelName: 'm' });
}

/** The `# HELP` and `# TYPE` lines of the families whose names start with `prefix`, in order. */
export function headerLines(text: string, prefix: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`# HELP ${prefix}`) || line.startsWith(`# TYPE ${prefix}`));
}

/** Every sample line (not a comment) whose name starts with `prefix`. */
export function sampleLines(text: string, prefix: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(prefix));
}

/** The value of the unlabelled sample `name`, or undefined when it is not printed. */
export function sampleValue(text: string, name: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

export interface FakeProc {
  /** The directory standing in for `/proc` (`stat`, `self/stat`, `self/limits`, `self/fd/`). */
  readonly root: string;
  /** Reads `/proc/...` paths from `root`, as the collector's reader. */
  readonly reader: ProcReader;
  /** Deletes the directory (a test calls it when done, so no `omni-proc-*` directory is left in the temporary directory). */
  remove(): void;
}

/** A fake `/proc` with the given files and `openFds` entries in `self/fd`. */
export function fakeProc(files: { stat: string; selfStat: string; limits: string; openFds: number }): FakeProc {
  const root = mkdtempSync(join(tmpdir(), 'omni-proc-'));
  mkdirSync(join(root, 'self', 'fd'), { recursive: true });
  writeFileSync(join(root, 'stat'), files.stat);
  writeFileSync(join(root, 'self', 'stat'), files.selfStat);
  writeFileSync(join(root, 'self', 'limits'), files.limits);
  for (let fd = 0; fd < files.openFds; fd++) writeFileSync(join(root, 'self', 'fd', String(fd)), '');
  const local = (path: string): string => join(root, path.replace(/^\/proc\//, ''));
  return {
    root,
    reader: {
      readFile: (path) => readFileSync(local(path), 'latin1'),
      readDir: (path) => readdirSync(local(path)),
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
