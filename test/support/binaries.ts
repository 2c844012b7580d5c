import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Locate an executable: `$<envVar>` if set, else `name` on $PATH, else
 * `/usr/bin/<name>`. Throws naming what it tried.
 */
export function findBinary(name: string, envVar: string): string {
  const tried: string[] = [];
  const fromEnv = process.env[envVar];
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new Error(`$${envVar}=${fromEnv} is not an executable file`);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    tried.push(candidate);
    if (isExecutable(candidate)) return candidate;
  }
  const fallback = path.join('/usr/bin', name);
  tried.push(fallback);
  if (isExecutable(fallback)) return fallback;
  throw new Error(`\`${name}\` binary not found (set $${envVar}, or put it on $PATH; tried ${[...new Set(tried)].join(', ')})`);
}

export interface ProcessResult {
  exitCode: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion, optionally feeding `stdin`, capturing both streams. */
export function runProcess(bin: string, args: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<ProcessResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return new Promise<ProcessResult>((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    // The child may exit before reading all of stdin (e.g. promtool stops at
    // the first parse error): ignore EPIPE / ECONNRESET on our side.
    child.stdin.on('error', () => undefined);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${bin} ${args.join(' ')}: timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        exitCode: code ?? -1,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}
