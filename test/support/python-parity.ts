import { execFileSync } from 'node:child_process';
import { renderStore } from './exposition';
import type { SeriesStore } from '../../views/store/series-store';
import { peerProgram } from './peers/need-peer';

/**
 * Debian's interpreter with python3-prometheus-client 0.16 (Debian bookworm), the library vLLM
 * prints its `/metrics` with; the calling suite declares it with
 * `needPeer('debian-prometheus-client', this)`.
 */
export function debianPython(): string {
  return peerProgram('debian-prometheus-client', 'python');
}

/** What a parity fixture prints: prometheus_client's version and both expositions. */
export interface PythonReference {
  readonly version: string;
  readonly text: string;
  readonly openmetrics: string;
  /** The OpenMetrics for a scraper that asks for `escaping=allow-utf-8`, from clients that negotiate it (0.23.0 on). */
  readonly openmetrics_allow_utf8?: string;
}

/**
 * Runs a parity fixture with `input` as JSON on stdin and `env` added to the environment, under
 * Debian's prometheus_client or under `python` (the newest prometheus_client's virtual environment).
 */
export function renderWithPython(script: string, input: unknown, env: NodeJS.ProcessEnv, python = debianPython()): PythonReference {
  const output = execFileSync(python, [script], {
    input: JSON.stringify(input),
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return JSON.parse(output) as PythonReference;
}

/** The store's exposition as a scrape gets it. */
export function renderOurs(store: SeriesStore, format: 'text' | 'openmetrics', createdSeries: boolean): string {
  return renderStore(store, { format, createdSeries }).toString('utf8');
}
