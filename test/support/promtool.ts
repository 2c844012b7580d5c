/**
 * Thin wrappers around Debian's `promtool` (Prometheus 2.42.0+ds).
 *
 * What `promtool check metrics` 2.42 actually does (measured on this machine
 * by piping sample exposition text into it):
 *
 *  - Reads the Prometheus text format from stdin. Writes NOTHING to stdout
 *    (unless --extended is given, which prints a cardinality table on stdout);
 *    every finding goes to STDERR, one per line, sorted by metric name,
 *    formatted as `<metric family name> <problem>`. Exact lines seen:
 *
 *      vllm:foo counter metrics should have "_total" suffix
 *      vllm:foo metric names should not contain ':'
 *      x_total non-counter metrics should not have "_total" suffix
 *      fooBar_total metric names should be written in 'snake_case' not 'camelCase'
 *      foo no help text
 *      foo_milliseconds use base unit "seconds" instead of "milliseconds"
 *      foo non-histogram metrics should not have "le" label
 *
 *    NB: in 2.42 EVERY metric name containing ':' is flagged
 *    ("metric names should not contain ':'"), so vLLM-style `vllm:*` names
 *    always produce at least that finding.
 *
 *  - Exit codes:
 *      0  no findings (also for empty input and for OpenMetrics `# EOF`)
 *      3  lint findings only (the text parsed fine)
 *      1  the text could not be parsed; stderr then holds a single line and
 *         no lint findings at all, e.g.
 *           error while linting: text format parsing error in line 1: invalid label name for metric "foo"
 *           error while linting: text format parsing error in line 2: expected float as value, got "abc"
 *           error while linting: text format parsing error in line 2: second HELP line for metric name "foo"
 *
 * `promtool check config FILE` / `check rules FILE...`: exit 0 on success
 * (stdout "Checking FILE" + " SUCCESS: ..."), exit 1 on failure with
 * "  FAILED: <reason>" on stderr (e.g. "FAILED: parsing YAML file bad.yml:
 * global scrape timeout greater than scrape interval", or
 * "r.yml: 1:58: group "g", rule 1, "job:foo:sum": could not parse expression: ...").
 * A missing file gives exit 1 and "promtool: error: path 'x.yml' does not exist, try --help".
 * Duplicate recording rules are only a warning (exit 0, "lint error 1 duplicate
 * rule(s) found." on stderr) unless `--lint-fatal` is passed, which makes them
 * exit 3.
 */
import { runProcess } from './binaries';
import { peerProgram } from './peers/need-peer';

/** Debian's promtool 2.42, which the calling suite declares with `needPeer('debian-prometheus', this)`. */
export function findPromtoolBinary(): string {
  return peerProgram('debian-prometheus', 'promtool');
}

export interface LintProblem {
  /** Metric family name as promtool printed it, e.g. `vllm:foo`. */
  metric: string;
  /** The rest of the line, e.g. `counter metrics should have "_total" suffix`. */
  problem: string;
}

export interface CheckMetricsResult {
  /**
   * Every non-empty line promtool printed (stderr, then stdout), trimmed,
   * in promtool's order. For exit 3 these are the lint findings; for exit 1
   * it is the single `error while linting: ...` line.
   */
  findings: string[];
  /** 0 = clean, 3 = lint findings, 1 = unparsable input (see header comment). */
  exitCode: number;
  /** stderr followed by stdout, verbatim. */
  raw: string;
  stdout: string;
  stderr: string;
  /** `findings` split into metric name + problem (lint lines only). */
  problems: LintProblem[];
  /** The parse error message (without the `error while linting: ` prefix) when exitCode is 1. */
  parseError?: string;
}

const PARSE_ERROR_PREFIX = 'error while linting: ';

function nonEmptyLines(s: string): string[] {
  return s
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** Run `promtool check metrics` with `text` on stdin (Debian's promtool unless `binary` names another). */
export async function checkMetrics(text: string, binary: string = findPromtoolBinary()): Promise<CheckMetricsResult> {
  const res = await runProcess(binary, ['check', 'metrics'], { stdin: text });
  const findings = [...nonEmptyLines(res.stderr), ...nonEmptyLines(res.stdout)];
  const problems: LintProblem[] = [];
  let parseError: string | undefined;
  for (const line of findings) {
    if (line.startsWith(PARSE_ERROR_PREFIX)) {
      parseError = line.slice(PARSE_ERROR_PREFIX.length);
      continue;
    }
    const sp = line.indexOf(' ');
    if (sp > 0) problems.push({ metric: line.slice(0, sp), problem: line.slice(sp + 1) });
  }
  const result: CheckMetricsResult = {
    findings,
    exitCode: res.exitCode,
    raw: res.stderr + res.stdout,
    stdout: res.stdout,
    stderr: res.stderr,
    problems,
  };
  if (parseError !== undefined) result.parseError = parseError;
  return result;
}

export interface CheckResult {
  ok: boolean;
  exitCode: number;
  /** stdout followed by stderr. */
  output: string;
}

/** `promtool check config <path>` (also checks rule files the config references); Debian's 2.42 unless `binary` names another. */
export async function checkConfig(path: string, binary: string = findPromtoolBinary()): Promise<CheckResult> {
  const res = await runProcess(binary, ['check', 'config', path]);
  return { ok: res.exitCode === 0, exitCode: res.exitCode, output: res.stdout + res.stderr };
}

/**
 * `promtool check rules <path...>` (Debian's promtool unless `binary` names another). With
 * `lintFatal`, duplicate-rule lint warnings also fail the check (exit 3; they are only warnings otherwise).
 */
export async function checkRules(path: string | string[], opts: { lintFatal?: boolean; binary?: string } = {}): Promise<CheckResult> {
  const args = ['check', 'rules'];
  if (opts.lintFatal) args.push('--lint-fatal');
  args.push(...(Array.isArray(path) ? path : [path]));
  const res = await runProcess(opts.binary ?? findPromtoolBinary(), args);
  return { ok: res.exitCode === 0, exitCode: res.exitCode, output: res.stdout + res.stderr };
}
