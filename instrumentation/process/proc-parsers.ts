/**
 * Clock ticks per second (`sysconf(_SC_CLK_TCK)`), which Node cannot ask for. It is the kernel's
 * USER_HZ, 100 on every architecture Node runs on; prometheus_client falls back to the same 100.
 */
export const CLOCK_TICKS_PER_SECOND = 100;

/** The fields of `/proc/self/stat` that prometheus_client's `ProcessCollector` reads. */
export interface ProcStat {
  readonly virtualMemoryBytes: number;
  /** Clock ticks after boot at which the process started. */
  readonly startTicks: number;
  readonly userTicks: number;
  readonly systemTicks: number;
}

/**
 * Parses `/proc/<pid>/stat` as prometheus_client does: the fields after the command name's
 * closing parenthesis (the name itself may hold spaces and parentheses), split on whitespace.
 * Throws when a field is missing or not a number.
 */
export function parseProcStat(text: string): ProcStat {
  const fields = text
    .slice(text.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/);
  // Field 3 of proc(5) (the state) is fields[0]: utime (14), stime (15), starttime (22), vsize (23).
  return {
    userTicks: numberAt(fields, 11),
    systemTicks: numberAt(fields, 12),
    startTicks: numberAt(fields, 19),
    virtualMemoryBytes: numberAt(fields, 20),
  };
}

/** The boot time in seconds since the epoch: the `btime` line of `/proc/stat`. */
export function parseBootTime(text: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith('btime '));
  if (line === undefined) throw new Error('/proc/stat has no btime line');
  return numberAt(line.split(/\s+/), 1);
}

/**
 * The soft limit on open files: the `Max open files` line of `/proc/<pid>/limits`, its fourth
 * whitespace-separated word, as prometheus_client takes it. Throws when the limit is `unlimited`.
 */
export function parseMaxOpenFiles(text: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith('Max open file'));
  if (line === undefined) throw new Error('no "Max open files" line');
  return numberAt(line.split(/\s+/), 3);
}

function numberAt(fields: readonly string[], index: number): number {
  const text = fields[index];
  const value = text === undefined || text === '' ? NaN : Number(text);
  if (!Number.isFinite(value)) throw new Error(`expected a number at field ${index}, found ${text === undefined ? 'nothing' : JSON.stringify(text)}`);
  return value;
}
