import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';

/**
 * Where every copy of `@opentelemetry/api` 1.x in the process keeps its globals; `diag.setLogger`
 * (the application's, or NodeSDK's when `OTEL_LOG_LEVEL` is set) stores the logger under `diag`.
 * The API has no getter for "is a logger installed", and its `diag` drops messages when none is.
 */
const API_GLOBALS = Symbol.for('opentelemetry.js.api.1');

/** `OTEL_LOG_LEVEL` values as the OpenTelemetry environment specification and the JS SDK name them (any case). */
const LEVELS: Readonly<Record<string, DiagLogLevel>> = {
  NONE: DiagLogLevel.NONE,
  ERROR: DiagLogLevel.ERROR,
  WARN: DiagLogLevel.WARN,
  INFO: DiagLogLevel.INFO,
  DEBUG: DiagLogLevel.DEBUG,
  VERBOSE: DiagLogLevel.VERBOSE,
  ALL: DiagLogLevel.ALL,
};

/** A library is heard at warn level by default: its problems, not its chatter. */
const DEFAULT_LEVEL = DiagLogLevel.WARN;

/** True when the application (or an SDK it started) installed a diag logger with `diag.setLogger`. */
export function hasDiagLogger(): boolean {
  const globals = (globalThis as Record<symbol, { diag?: unknown } | undefined>)[API_GLOBALS];
  return globals?.diag !== undefined;
}

/** The console fallback's level: `OTEL_LOG_LEVEL` (unset or unknown: warn). */
export function consoleFallbackLevel(env: NodeJS.ProcessEnv = process.env): DiagLogLevel {
  const value = env.OTEL_LOG_LEVEL?.trim();
  if (value === undefined || value === '') return DEFAULT_LEVEL;
  return LEVELS[value.toUpperCase()] ?? DEFAULT_LEVEL;
}

type Method = keyof DiagLogger;

/** The console method and the level at which each diag method is printed. */
const CONSOLE_ROUTES: Readonly<Record<Method, { readonly level: DiagLogLevel; readonly print: (...args: unknown[]) => void }>> = {
  error: { level: DiagLogLevel.ERROR, print: (...args) => console.error(...args) },
  warn: { level: DiagLogLevel.WARN, print: (...args) => console.warn(...args) },
  info: { level: DiagLogLevel.INFO, print: (...args) => console.info(...args) },
  debug: { level: DiagLogLevel.DEBUG, print: (...args) => console.debug(...args) },
  verbose: { level: DiagLogLevel.VERBOSE, print: (...args) => console.debug(...args) },
};

/**
 * The package's own diagnostics. With a diag logger installed they go to it, and only to it (its
 * level and destination are the application's choice). Without one, `diag` would drop them, so
 * they are printed on the console at `OTEL_LOG_LEVEL` (default warn). The package never calls
 * `diag.setLogger`: a logger the application installs later is never overridden nor warned about.
 * The level is read once, at the first message printed on the console.
 */
class PackageDiag implements DiagLogger {
  private level: DiagLogLevel | undefined;

  readonly error = this.route('error');
  readonly warn = this.route('warn');
  readonly info = this.route('info');
  readonly debug = this.route('debug');
  readonly verbose = this.route('verbose');

  /** Forgets the level read from the environment (tests change `OTEL_LOG_LEVEL`). */
  resetLevel(): void {
    this.level = undefined;
  }

  private route(method: Method): (message: string, ...args: unknown[]) => void {
    const { level, print } = CONSOLE_ROUTES[method];
    return (message, ...args) => {
      if (hasDiagLogger()) {
        diag[method](message, ...args);
        return;
      }
      this.level ??= consoleFallbackLevel();
      if (level <= this.level) print(message, ...args);
    };
  }
}

export const packageDiag = new PackageDiag();
