/**
 * Start a REAL Prometheus server (Debian's `prometheus` package, 2.42) for
 * integration tests.
 *
 *   const prom = await startPrometheus({ scrapeTargets: [{ job: 'app', target: '127.0.0.1:9464' }] });
 *   try {
 *     const [s] = await prom.waitFor('vllm:num_requests_running', (r) => r.length > 0, 10_000);
 *   } finally {
 *     await prom.stop();
 *   }
 *
 * The server listens on 127.0.0.1 only, on an ephemeral port, with its config
 * and TSDB in a fresh temp dir that stop() removes. A process 'exit' handler
 * (plus SIGINT/SIGTERM/SIGHUP) SIGKILLs any server still running, so an
 * aborted test run does not leave Prometheus behind. (A SIGKILL of the node
 * process itself cannot be caught; then the server is orphaned.)
 *
 * Timing: Prometheus 2.42 applies target changes from its scrape manager on a
 * fixed 5 s ticker (not configurable before 2.4x), so the FIRST scrape happens
 * ~5 s after startup even with a 1 s scrape interval; after that, every
 * `scrapeIntervalSeconds`. /-/ready itself takes ~0.1-0.2 s. Start one server
 * per suite (in `before`) rather than per test, and do quick independent
 * checks while it warms up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { httpGet } from './http';
import { peerProgram } from './peers/need-peer';
import { freePort } from './ports';

export interface ScrapeTarget {
  /** Becomes the `job` label; targets sharing a job (and metricsPath) share one scrape config. */
  job: string;
  /** `host:port`, e.g. `127.0.0.1:9464` (no scheme). */
  target: string;
  /** Default `/metrics`. */
  metricsPath?: string;
  /** `https` scrapes over TLS, trusting `caFile`. */
  scheme?: 'http' | 'https';
  caFile?: string;
  /** Sent as `Authorization: Bearer …` (the scrape config's `authorization` section). */
  bearerToken?: string;
  /** More settings of this job's scrape config, as Prometheus names them (e.g. `scrape_protocols`). */
  settings?: Record<string, unknown>;
}

export interface StartPrometheusOptions {
  scrapeTargets: ScrapeTarget[];
  /** The server to run; default Debian's 2.42 (the `debian-prometheus` peer). */
  binary?: string;
  /** More settings of the configuration file's top level (e.g. `otlp`). */
  config?: Record<string, unknown>;
  /** Global scrape interval; may be fractional (0.5 → 500ms). Default 1. */
  scrapeIntervalSeconds?: number;
  /** Rule files to load (absolute paths, or relative to process.cwd()). */
  ruleFiles?: string[];
  /** How long to wait for /-/ready per attempt. Default 20 000 ms. */
  readyTimeoutMs?: number;
  /** How many ports to try if Prometheus fails to bind. Default 5. */
  bindAttempts?: number;
  /** Extra command-line flags for Prometheus. */
  extraArgs?: string[];
  /** Feature flags, passed as one `--enable-feature=a,b` (e.g. `exemplar-storage`). */
  features?: string[];
  /** Port chooser; defaults to freePort(). Exposed for the harness self-test. */
  portPicker?: () => Promise<number>;
}

export interface InstantSample {
  metric: Record<string, string>;
  /** [unix time in seconds (float), value as Prometheus formats it, e.g. "3"] */
  value: [number, string];
}

export interface ActiveTarget {
  discoveredLabels: Record<string, string>;
  labels: Record<string, string>;
  scrapePool: string;
  scrapeUrl: string;
  globalUrl: string;
  lastError: string;
  lastScrape: string;
  lastScrapeDuration: number;
  health: 'up' | 'down' | 'unknown';
  scrapeInterval: string;
  scrapeTimeout: string;
}

export interface ExemplarsResult {
  seriesLabels: Record<string, string>;
  exemplars: Array<{ labels: Record<string, string>; value: string; timestamp: number }>;
}

export interface TargetsResult {
  activeTargets: ActiveTarget[];
  droppedTargets: Array<{ discoveredLabels: Record<string, string> }>;
}

export interface PrometheusHandle {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Temp dir holding prometheus.yml and data/ (removed by stop()). */
  readonly dir: string;
  readonly configPath: string;
  /** Instant query via /api/v1/query. Scalar results come back as one sample with `{}` labels. */
  query(promql: string, time?: number | Date): Promise<InstantSample[]>;
  /** The raw samples stored in the last `seconds` for a selector (`selector[Ns]`, a range vector): per series, `[time, value]` in order. */
  rawSamples(selector: string, seconds: number): Promise<Array<{ metric: Record<string, string>; values: Array<[number, string]> }>>;
  /** Label sets via /api/v1/series (`match[]`), over the whole retained time range. */
  series(match: string | string[]): Promise<Array<Record<string, string>>>;
  /**
   * Poll `query(promql)` until `predicate(result)` is true and return that
   * result. PromQL syntax errors (bad_data) fail immediately; other errors are
   * retried. On timeout the error includes the last result/error, the target
   * health and Prometheus's last log lines.
   */
  waitFor(promql: string, predicate: (result: InstantSample[]) => boolean, timeoutMs?: number, pollIntervalMs?: number): Promise<InstantSample[]>;
  /** /api/v1/targets */
  targets(): Promise<TargetsResult>;
  /** /api/v1/query_exemplars between `start` and `end` (seconds); needs the `exemplar-storage` feature. */
  queryExemplars(promql: string, start: number, end: number): Promise<ExemplarsResult[]>;
  /**
   * Wait until every active target has been scraped at least once (health is
   * no longer 'unknown'); returns the targets. Does not require health 'up'.
   */
  waitForScrape(timeoutMs?: number): Promise<ActiveTarget[]>;
  /** Last lines Prometheus wrote to stdout/stderr. */
  logs(lines?: number): string;
  /** SIGTERM (then SIGKILL after 5 s), wait for exit, remove the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** Debian's Prometheus 2.42, which the calling suite declares with `needPeer('debian-prometheus', this)`. */
export function findPrometheusBinary(): string {
  return peerProgram('debian-prometheus', 'prometheus');
}

// ---------------------------------------------------------------------------
// Cleanup of servers still running when the test process goes away.

interface Live {
  child: ChildProcess;
  dir: string;
}
const live = new Set<Live>();
/** The process listeners installed while a server runs (each signal listener also starts a signal watcher). */
const exitHandlers: Array<[event: string, listener: () => void]> = [];

function killAllSync(): void {
  for (const l of live) {
    try {
      if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
    try {
      fs.rmSync(l.dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      /* best effort */
    }
  }
  live.clear();
}

function installExitHandlers(): void {
  if (exitHandlers.length > 0) return;
  exitHandlers.push(['exit', killAllSync]);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAllSync();
      process.removeListener(sig, onSignal);
      // If nobody else handles this signal, restore the default (terminate).
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    exitHandlers.push([sig, onSignal]);
  }
  for (const [event, listener] of exitHandlers) process.on(event, listener);
}

/** With no server left, the listeners go too: a test run that stopped every server leaves nothing of the harness behind. */
function removeExitHandlersWhenIdle(): void {
  if (live.size > 0) return;
  for (const [event, listener] of exitHandlers.splice(0)) process.removeListener(event, listener);
}

// ---------------------------------------------------------------------------

/** Keeps the tail of a child's output. */
class LogTail {
  private buf = '';
  constructor(private readonly maxChars = 64 * 1024) {}
  push(chunk: Buffer | string): void {
    this.buf += chunk.toString();
    if (this.buf.length > this.maxChars) this.buf = this.buf.slice(this.buf.length - this.maxChars);
  }
  text(): string {
    return this.buf;
  }
  lastLines(n: number): string {
    const lines = this.buf.split('\n').filter((l) => l.length > 0);
    return lines.slice(-n).join('\n');
  }
}

function formatDuration(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  if (!(ms > 0)) throw new Error(`scrapeIntervalSeconds must be > 0 (got ${seconds})`);
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function buildConfig(opts: StartPrometheusOptions): string {
  const intervalSec = opts.scrapeIntervalSeconds ?? 1;
  const intervalMs = Math.round(intervalSec * 1000);
  const timeoutMs = Math.min(800, intervalMs); // < 1s, and never above the interval
  const byJob = new Map<string, { metricsPath: string; targets: string[]; first: ScrapeTarget }>();
  for (const t of opts.scrapeTargets) {
    if (!t.job) throw new Error('startPrometheus: scrape target without job name');
    if (!t.target) throw new Error(`startPrometheus: job ${t.job} has an empty target`);
    const metricsPath = t.metricsPath ?? '/metrics';
    const existing = byJob.get(t.job);
    if (existing) {
      if (existing.metricsPath !== metricsPath) {
        throw new Error(`startPrometheus: job ${t.job} used with two metricsPaths (${existing.metricsPath}, ${metricsPath}); use distinct job names`);
      }
      existing.targets.push(t.target);
    } else {
      byJob.set(t.job, { metricsPath, targets: [t.target], first: t });
    }
  }
  // JSON is valid YAML, so no YAML library is needed.
  const config = {
    global: {
      scrape_interval: formatDuration(intervalSec),
      scrape_timeout: formatDuration(timeoutMs / 1000),
      evaluation_interval: '1s',
    },
    rule_files: (opts.ruleFiles ?? []).map((f) => path.resolve(f)),
    scrape_configs: [...byJob].map(([job, { metricsPath, targets, first }]) => ({
      job_name: job,
      metrics_path: metricsPath,
      static_configs: [{ targets }],
      ...(first.scheme ? { scheme: first.scheme } : {}),
      ...(first.caFile ? { tls_config: { ca_file: path.resolve(first.caFile) } } : {}),
      ...(first.bearerToken ? { authorization: { type: 'Bearer', credentials: first.bearerToken } } : {}),
      ...first.settings,
    })),
    ...opts.config,
  };
  return JSON.stringify(config, null, 2) + '\n';
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

const BIND_ERROR = /address already in use/i;

interface Launched {
  child: ChildProcess;
  port: number;
  log: LogTail;
}

/** Spawn once on `port`; resolve when /-/ready is 200, reject (with .bindFailure) otherwise. */
async function launchOnce(bin: string, args: string[], port: number, dir: string, readyTimeoutMs: number): Promise<Launched> {
  const log = new LogTail();
  const child = spawn(bin, [...args, `--web.listen-address=127.0.0.1:${port}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry: Live = { child, dir };
  live.add(entry);
  child.stdout!.on('data', (c: Buffer) => log.push(c));
  child.stderr!.on('data', (c: Buffer) => log.push(c));
  let spawnError: Error | undefined;
  child.on('error', (e) => {
    spawnError = e;
  });
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    exited = true;
  });

  const failure = async (reason: string): Promise<never> => {
    if (!exited) {
      child.kill('SIGKILL');
      // A plain sleep() here would outlive the exit as a pending 2 s timer.
      let giveUp: NodeJS.Timeout | undefined;
      await Promise.race([exitPromise, new Promise<void>((resolve) => (giveUp = setTimeout(resolve, 2000)))]);
      clearTimeout(giveUp);
    }
    live.delete(entry);
    removeExitHandlersWhenIdle();
    const err = new Error(`Prometheus (${bin}, port ${port}) ${reason}.\n--- last Prometheus log lines ---\n${log.lastLines(25)}`) as Error & {
      bindFailure?: boolean;
    };
    err.bindFailure = BIND_ERROR.test(log.text());
    throw err;
  };

  const deadline = Date.now() + readyTimeoutMs;
  const readyUrl = `http://127.0.0.1:${port}/-/ready`;
  while (Date.now() < deadline) {
    if (spawnError) return failure(`could not be started: ${spawnError.message}`);
    if (exited) {
      return failure(`exited during startup (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    if (BIND_ERROR.test(log.text())) return failure('could not bind its listen address');
    try {
      const res = await httpGet(readyUrl, {}, { timeoutMs: 500 });
      if (res.status === 200 && !exited && !BIND_ERROR.test(log.text())) {
        return { child, port, log };
      }
    } catch {
      /* not listening yet */
    }
    await sleep(100);
  }
  return failure(`was not ready (${readyUrl}) within ${readyTimeoutMs} ms`);
}

interface ApiEnvelope<T> {
  status: 'success' | 'error';
  data?: T;
  errorType?: string;
  error?: string;
  warnings?: string[];
}

class PromApiError extends Error {
  constructor(
    message: string,
    readonly errorType: string | undefined,
  ) {
    super(message);
  }
}

/** Start Prometheus scraping `scrapeTargets`; see file header. */
export async function startPrometheus(opts: StartPrometheusOptions): Promise<PrometheusHandle> {
  const bin = opts.binary ?? findPrometheusBinary();
  const configText = buildConfig(opts);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'omni-prometheus-'));
  const configPath = path.join(dir, 'prometheus.yml');
  const dataDir = path.join(dir, 'data');
  fs.writeFileSync(configPath, configText);
  installExitHandlers();

  const args = [
    `--config.file=${configPath}`,
    `--storage.tsdb.path=${dataDir}`,
    '--storage.tsdb.retention.time=1d',
    '--log.level=info',
    ...(opts.features !== undefined && opts.features.length > 0 ? [`--enable-feature=${opts.features.join(',')}`] : []),
    ...(opts.extraArgs ?? []),
  ];
  const attempts = Math.max(1, opts.bindAttempts ?? 5);
  const pickPort = opts.portPicker ?? (() => freePort());
  let launched: Launched | undefined;
  let lastError: unknown;
  for (let i = 0; i < attempts && !launched; i++) {
    const port = await pickPort();
    try {
      launched = await launchOnce(bin, args, port, dir, opts.readyTimeoutMs ?? 20_000);
    } catch (e) {
      lastError = e;
      if (!(e as { bindFailure?: boolean }).bindFailure) break;
      // Stale TSDB lock / partial data from the failed attempt: start clean.
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (!launched) {
    removeExitHandlersWhenIdle();
    fs.rmSync(dir, { recursive: true, force: true });
    const msg = lastError instanceof Error ? lastError.message : String(lastError);
    throw new Error(`startPrometheus failed (config:\n${configText}): ${msg}`);
  }

  const { child, port, log } = launched;
  const url = `http://127.0.0.1:${port}`;
  const entry = [...live].find((l) => l.child === child)!;

  async function api<T>(pathAndQuery: string): Promise<T> {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Prometheus at ${url} is not running.\n${log.lastLines(25)}`);
    }
    const res = await httpGet(url + pathAndQuery, { Accept: 'application/json' });
    let body: ApiEnvelope<T>;
    try {
      body = JSON.parse(res.body) as ApiEnvelope<T>;
    } catch {
      throw new Error(`GET ${pathAndQuery}: HTTP ${res.status}, non-JSON body: ${res.body.slice(0, 500)}`);
    }
    if (res.status !== 200 || body.status !== 'success') {
      throw new PromApiError(`GET ${pathAndQuery}: HTTP ${res.status} ${body.errorType ?? ''}: ${body.error ?? res.body.slice(0, 500)}`, body.errorType);
    }
    return body.data as T;
  }

  async function query(promql: string, time?: number | Date): Promise<InstantSample[]> {
    const params = new URLSearchParams({ query: promql });
    if (time !== undefined) {
      params.set('time', String(time instanceof Date ? time.getTime() / 1000 : time));
    }
    const data = await api<{ resultType: string; result: unknown }>(`/api/v1/query?${params}`);
    switch (data.resultType) {
      case 'vector':
        return data.result as InstantSample[];
      case 'scalar':
      case 'string':
        return [{ metric: {}, value: data.result as [number, string] }];
      default:
        throw new Error(`query(${promql}) returned a ${data.resultType}; only instant vectors/scalars are supported (use an instant selector)`);
    }
  }

  async function rawSamples(selector: string, seconds: number): Promise<Array<{ metric: Record<string, string>; values: Array<[number, string]> }>> {
    const data = await api<{ resultType: string; result: Array<{ metric: Record<string, string>; values?: Array<[number, string]> }> }>(
      `/api/v1/query?${new URLSearchParams({ query: `${selector}[${seconds}s]` })}`,
    );
    if (data.resultType !== 'matrix') throw new Error(`rawSamples(${selector}) returned a ${data.resultType}`);
    return data.result.map(({ metric, values }) => ({ metric, values: values ?? [] }));
  }

  async function series(match: string | string[]): Promise<Array<Record<string, string>>> {
    const params = new URLSearchParams();
    for (const m of Array.isArray(match) ? match : [match]) params.append('match[]', m);
    return api<Array<Record<string, string>>>(`/api/v1/series?${params}`);
  }

  async function targets(): Promise<TargetsResult> {
    return api<TargetsResult>('/api/v1/targets');
  }

  async function queryExemplars(promql: string, start: number, end: number): Promise<ExemplarsResult[]> {
    const params = new URLSearchParams({ query: promql, start: String(start), end: String(end) });
    return api<ExemplarsResult[]>(`/api/v1/query_exemplars?${params}`);
  }

  async function waitFor(promql: string, predicate: (result: InstantSample[]) => boolean, timeoutMs = 10_000, pollIntervalMs = 200): Promise<InstantSample[]> {
    const deadline = Date.now() + timeoutMs;
    let last: InstantSample[] | undefined;
    let lastErr: unknown;
    for (;;) {
      try {
        last = await query(promql);
        lastErr = undefined;
        if (predicate(last)) return last;
      } catch (e) {
        if (e instanceof PromApiError && e.errorType === 'bad_data') throw e;
        lastErr = e;
      }
      if (Date.now() >= deadline) break;
      await sleep(pollIntervalMs);
    }
    let targetInfo: string;
    try {
      const t = await targets();
      targetInfo = t.activeTargets
        .map((a) => `  ${a.scrapePool} ${a.scrapeUrl} health=${a.health}${a.lastError ? ` lastError=${a.lastError}` : ''}`)
        .join('\n');
    } catch (e) {
      targetInfo = `  (targets unavailable: ${(e as Error).message})`;
    }
    throw new Error(
      `waitFor(${promql}) timed out after ${timeoutMs} ms.\n` +
        `last result: ${JSON.stringify(last)}\n` +
        (lastErr ? `last error: ${(lastErr as Error).message ?? String(lastErr)}\n` : '') +
        `targets:\n${targetInfo}\n--- last Prometheus log lines ---\n${log.lastLines(15)}`,
    );
  }

  async function waitForScrape(timeoutMs = 15_000): Promise<ActiveTarget[]> {
    const deadline = Date.now() + timeoutMs;
    let last: ActiveTarget[];
    for (;;) {
      last = (await targets()).activeTargets;
      if (last.length > 0 && last.every((t) => t.health !== 'unknown')) return last;
      if (Date.now() >= deadline) break;
      await sleep(200);
    }
    throw new Error(
      `waitForScrape timed out after ${timeoutMs} ms: ${JSON.stringify(last.map((t) => [t.scrapeUrl, t.health]))}\n` +
        `--- last Prometheus log lines ---\n${log.lastLines(15)}`,
    );
  }

  let stopping: Promise<void> | undefined;
  function stop(): Promise<void> {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const killTimer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killTimer);
      }
      live.delete(entry);
      removeExitHandlersWhenIdle();
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return stopping;
  }

  return {
    url,
    port,
    pid: child.pid!,
    dir,
    configPath,
    query,
    series,
    waitFor,
    targets,
    queryExemplars,
    rawSamples,
    waitForScrape,
    logs: (lines = 50) => log.lastLines(lines),
    stop,
  };
}
