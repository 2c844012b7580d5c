import type { SloOptions } from 'omni-otel-metrics';
import { parseScaleSchedule, type ScaleStep } from './scale-schedule';

/** What one load run does. */
export interface LoadOptions {
  /** OpenAI base URL, e.g. `http://localhost:8000/v1`. */
  readonly baseUrl: string;
  readonly requests: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
  /** Share of requests asking for audio (`modalities: ["text", "audio"]`). */
  readonly audioRatio: number;
  /** Share of requests that ask the images API for a picture instead of chatting. */
  readonly imageRatio: number;
  /** Share of requests that stream. */
  readonly streamRatio: number;
  /** Share of streaming requests whose client disconnects mid-stream. */
  readonly disconnectRatio: number;
  /** Seeds the request mix (kinds, prompts, lengths, disconnect points). */
  readonly seed: number;
  /** Largest `max_tokens`; each request draws from [maxTokens / 4, maxTokens]. */
  readonly maxTokens: number;
  /** Served model; default the first one `GET /v1/models` lists. */
  readonly model?: string;
  /** Per-request timeout. */
  readonly timeoutMs: number;
  /** Stages to scale during the run, through the server's `/admin/replicas` (needs `adminToken`). */
  readonly scale?: readonly ScaleStep[];
  /** Bearer token of the admin endpoint. */
  readonly adminToken?: string;
  /** Objectives to judge the completed requests by (the CLI reads the `SLO_*` variables `npm start` reads). */
  readonly slo?: SloOptions;
}

export const DEFAULT_LOAD_OPTIONS: LoadOptions = Object.freeze({
  baseUrl: 'http://localhost:8000/v1',
  requests: 100,
  concurrency: 8,
  audioRatio: 0.5,
  imageRatio: 0.1,
  streamRatio: 0.7,
  disconnectRatio: 0.1,
  seed: 0,
  maxTokens: 128,
  timeoutMs: 120_000,
});

export const LOAD_USAGE = `usage: npm run load -- [options]
  --requests N          requests to send (default ${DEFAULT_LOAD_OPTIONS.requests})
  --concurrency C       requests in flight at once (default ${DEFAULT_LOAD_OPTIONS.concurrency})
  --base-url URL        OpenAI base URL (default ${DEFAULT_LOAD_OPTIONS.baseUrl})
  --audio-ratio R       share asking for audio, 0..1 (default ${DEFAULT_LOAD_OPTIONS.audioRatio})
  --image-ratio R       share sent to the images API, 0..1 (default ${DEFAULT_LOAD_OPTIONS.imageRatio})
  --stream-ratio R      share streaming, 0..1 (default ${DEFAULT_LOAD_OPTIONS.streamRatio})
  --disconnect-ratio R  share of streams aborted mid-way, 0..1 (default ${DEFAULT_LOAD_OPTIONS.disconnectRatio})
  --max-tokens N        largest max_tokens (default ${DEFAULT_LOAD_OPTIONS.maxTokens})
  --model NAME          model (default: the server's first model)
  --timeout-ms MS       per-request timeout (default ${DEFAULT_LOAD_OPTIONS.timeoutMs})
  --seed S              seed of the request mix (default ${DEFAULT_LOAD_OPTIONS.seed})
  --scale STEPS         scale stages during the run, e.g. "1+1@5,1-1@15" (stage 1: a replica more
                        at 5 s, its newest drained at 15 s); needs the server's ADMIN_TOKEN
  --admin-token TOKEN   bearer token of /admin/replicas
Objectives: the SLO_* variables of npm start (SLO_E2E_SECONDS=5 ...); with any set, the summary
reports the goodput the client saw.`;

type Setter = (options: Partial<Record<keyof LoadOptions, unknown>>, value: string, flag: string) => void;

const FLAGS: Readonly<Record<string, Setter>> = {
  '--requests': (o, v, f) => (o.requests = integer(v, f, 1)),
  '--concurrency': (o, v, f) => (o.concurrency = integer(v, f, 1)),
  '--base-url': (o, v, f) => (o.baseUrl = url(v, f)),
  '--audio-ratio': (o, v, f) => (o.audioRatio = ratio(v, f)),
  '--image-ratio': (o, v, f) => (o.imageRatio = ratio(v, f)),
  '--stream-ratio': (o, v, f) => (o.streamRatio = ratio(v, f)),
  '--disconnect-ratio': (o, v, f) => (o.disconnectRatio = ratio(v, f)),
  '--max-tokens': (o, v, f) => (o.maxTokens = integer(v, f, 1)),
  '--model': (o, v) => (o.model = v),
  '--timeout-ms': (o, v, f) => (o.timeoutMs = integer(v, f, 1)),
  '--seed': (o, v, f) => (o.seed = integer(v, f, 0)),
  '--scale': (o, v, f) => (o.scale = parseScaleSchedule(v, f)),
  '--admin-token': (o, v) => (o.adminToken = v),
};

/** Parses `--flag value` / `--flag=value` arguments; throws with the usage text on anything unknown or invalid. */
export function parseLoadArgs(argv: readonly string[]): LoadOptions {
  const options: Partial<Record<keyof LoadOptions, unknown>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const setter = FLAGS[flag];
    if (setter === undefined) throw new RangeError(`unknown argument "${arg}"\n${LOAD_USAGE}`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new RangeError(`${flag} needs a value\n${LOAD_USAGE}`);
    setter(options, value, flag);
  }
  if (options.scale !== undefined && options.adminToken === undefined) throw new RangeError(`--scale needs --admin-token\n${LOAD_USAGE}`);
  return { ...DEFAULT_LOAD_OPTIONS, ...(options as Partial<LoadOptions>) };
}

function integer(value: string, flag: string, min: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || !Number.isSafeInteger(n)) throw new RangeError(`${flag} must be an integer >= ${min}; got "${value}"`);
  return n;
}

function ratio(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new RangeError(`${flag} must be a number from 0 to 1; got "${value}"`);
  return n;
}

function url(value: string, flag: string): string {
  try {
    return new URL(value).toString().replace(/\/$/, '');
  } catch {
    throw new RangeError(`${flag} must be a URL such as http://localhost:8000/v1; got "${value}"`);
  }
}
