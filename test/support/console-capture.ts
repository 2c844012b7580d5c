import assert from 'node:assert/strict';
import { format } from 'node:util';

export type ConsoleMethod = 'error' | 'warn' | 'info' | 'debug' | 'log';

/** One line printed on the console while captured, with the method that printed it. */
export interface ConsoleLine {
  readonly method: ConsoleMethod;
  readonly text: string;
}

const METHODS: readonly ConsoleMethod[] = ['error', 'warn', 'info', 'debug', 'log'];

/**
 * Runs `body` with the console's printing methods replaced by a recorder (nothing reaches the
 * terminal), and returns what was printed. The console is restored even when `body` throws.
 */
export async function captureConsole(body: () => unknown): Promise<ConsoleLine[]> {
  const lines: ConsoleLine[] = [];
  const saved = METHODS.map((method) => [method, console[method]] as const);
  for (const method of METHODS) console[method] = (...args: unknown[]) => void lines.push({ method, text: format(...args) });
  try {
    await body();
  } finally {
    for (const [method, original] of saved) console[method] = original;
  }
  return lines;
}

/** Runs `body` with environment variables set (undefined: removed), restoring them afterwards. */
export async function withEnv<T>(variables: Readonly<Record<string, string | undefined>>, body: () => Promise<T> | T): Promise<T> {
  const saved = Object.keys(variables).map((name) => [name, process.env[name]] as const);
  for (const [name, value] of Object.entries(variables)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    return await body();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * Runs `body`, which provokes warnings on purpose, with the console captured, and asserts that
 * exactly the `expected` lines were printed, in order (a RegExp for a line with a port, a path or
 * a time in it). Returns what `body` returned.
 */
export async function expectPrinted<T>(expected: ReadonlyArray<string | RegExp>, body: () => Promise<T> | T): Promise<T> {
  let result: T | undefined;
  const lines = await captureConsole(async () => {
    result = await body();
  });
  const texts = lines.map((line) => line.text);
  const matches = texts.length === expected.length && expected.every((want, i) => (typeof want === 'string' ? texts[i] === want : want.test(texts[i] ?? '')));
  if (!matches) assert.deepEqual(texts, expected, 'the lines printed');
  return result as T;
}

/**
 * Like `expectPrinted`, for a warning the package rate-limits process-wide (once a minute): whether
 * this test prints it depends on which test said it last. Every line printed must be one of
 * `allowed`; none at all passes too.
 */
export async function allowPrinted<T>(allowed: ReadonlyArray<string | RegExp>, body: () => Promise<T> | T): Promise<T> {
  let result: T | undefined;
  const lines = await captureConsole(async () => {
    result = await body();
  });
  const unexpected = lines.map((line) => line.text).filter((text) => !allowed.some((want) => (typeof want === 'string' ? text === want : want.test(text))));
  assert.deepEqual(unexpected, [], 'lines printed beyond the allowed ones');
  return result as T;
}
