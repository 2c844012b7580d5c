import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { codeBlocks, readPage, ROOT } from './doc-pages';

const RUNS_AS_WRITTEN = /Runs as written(?: on OpenTelemetry \d\.x)?:([^\n]*)/;
const PART = /Part of the program below, saved as ([\w.-]+)/;

/** A program a page says runs as written: its files (the parts before it, then itself) and the node arguments its mark names. */
export interface DocProgram {
  readonly files: ReadonlyMap<string, string>;
  readonly nodeArgs: readonly string[];
}

/**
 * The runnable programs of `page`, in page order, as `.ci/doc-examples.js` runs them in CI: each
 * TypeScript or JavaScript block marked "Runs as written", with the blocks before it that say
 * "Part of the program below, saved as <file>", transpiled to ES modules.
 */
export function docPrograms(page: string): DocProgram[] {
  const programs: DocProgram[] = [];
  let parts: Array<[string, string]> = [];
  const transpiled = (source: string): string =>
    ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  for (const block of codeBlocks(readPage(page)).filter((one) => one.language === 'ts' || one.language === 'js')) {
    const head = block.code.split('\n').slice(0, 6).join('\n');
    const part = PART.exec(head)?.[1];
    if (part !== undefined) {
      parts.push([part, transpiled(block.code)]);
      continue;
    }
    const mark = RUNS_AS_WRITTEN.exec(head);
    if (mark === null) {
      parts = [];
      continue;
    }
    const command = /\bnode ((?:--import \S+ )*)(\S+\.mjs)\b/.exec(mark[1] ?? '');
    const main = parts.length > 0 && command ? (command[2] as string) : 'program.mjs';
    programs.push({
      files: new Map([...parts, [main, transpiled(block.code)]]),
      nodeArgs: [...(parts.length > 0 && command ? (command[1] as string).trim().split(/\s+/) : []), `./${main}`],
    });
    parts = [];
  }
  return programs;
}

/** A documentation program started in a project of its own (see `startDocProgram`). */
export interface StartedDocProgram {
  readonly child: ChildProcess;
  /** What it printed so far. */
  readonly stdout: () => string;
  /** Settles when it exits: what it printed, or a rejection with it when it failed; the project is removed then. */
  readonly exited: Promise<{ stdout: string; stderr: string }>;
}

/**
 * Starts a documentation program with node in a project of its own whose node_modules hold the
 * package (this checkout: `npm run build` first, as `npm test` does) and the repository's
 * dependencies, as a user's project would. `env` adds to a copy of this process's environment
 * without its OTEL_ variables.
 */
export function startDocProgram(program: DocProgram, env: NodeJS.ProcessEnv = {}, timeoutMillis = 60_000): StartedDocProgram {
  const project = mkdtempSync(join(tmpdir(), 'omni-doc-program-'));
  const modules = join(project, 'node_modules');
  mkdirSync(modules);
  symlinkSync(ROOT, join(modules, 'omni-otel-metrics'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@opentelemetry'), join(modules, '@opentelemetry'), 'dir');
  for (const [file, source] of program.files) writeFileSync(join(project, file), source);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  let stdout = '';
  let stderr = '';
  const child = execFile(process.execPath, [...program.nodeArgs], { cwd: project, env: { ...clean, ...env }, timeout: timeoutMillis });
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    child.on('close', (code, signal) => {
      rmSync(project, { recursive: true, force: true });
      if (code === 0) resolve({ stdout, stderr });
      else reject(Object.assign(new Error(`the program exited with ${code ?? signal}:\n${stdout}${stderr}`), { stdout, stderr }));
    });
  });
  return { child, stdout: () => stdout, exited };
}

/** Runs a documentation program to its end (see `startDocProgram`): what it printed. */
export function runDocProgram(program: DocProgram, env: NodeJS.ProcessEnv = {}, timeoutMillis = 60_000): Promise<{ stdout: string; stderr: string }> {
  return startDocProgram(program, env, timeoutMillis).exited;
}
