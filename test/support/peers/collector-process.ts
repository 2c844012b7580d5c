/**
 * Runs the tests' OpenTelemetry Collector (`omni-otelcol`) with a configuration given as an object
 * (written as JSON, which is YAML), its own telemetry off so it binds no port of its own, and its
 * log kept for the test to read. `stop()` ends it and removes its folder.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface CollectorProcess {
  /** Everything the Collector wrote so far (its log and the debug exporter's output). */
  output(): string;
  stop(): Promise<void>;
}

export function startCollector(binary: string, config: Record<string, unknown>): CollectorProcess {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'omni-otelcol-'));
  const file = path.join(dir, 'config.yaml');
  const service = (config.service ?? {}) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...config, service: { ...service, telemetry: { metrics: { level: 'none' } } } }, null, 2));
  const child = spawn(binary, ['--config', `file:${file}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(kill);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
