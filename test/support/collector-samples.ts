/**
 * Comparing what the OpenTelemetry Collector's `prometheus` exporter prints with the package's own
 * `/metrics`: samples keyed by name and own labels, and a poll for the Collector to catch up.
 */
import assert from 'node:assert/strict';
import { parseGoFloat, type Sample } from './exposition';

/** Labels the Collector's Prometheus exporter adds (`job` and `instance` from the resource). */
const ADDED = new Set(['job', 'instance', 'otel_scope_name', 'otel_scope_version', 'otel_scope_schema_url']);

/** A sample's name and own labels, `le` by its value (the Collector prints `1`, the package `1.0`). */
export function collectorKey(sample: Sample): string {
  const labels = Object.entries(sample.labels)
    .filter(([name]) => !ADDED.has(name))
    .map(([name, value]) => [name, name === 'le' ? String(parseGoFloat(value)) : value])
    .sort(([a = ''], [b = '']) => (a < b ? -1 : 1));
  return `${sample.name}${JSON.stringify(labels)}`;
}

/** The package's own samples the Collector's do not have, and those it has with another value. */
export function differencesFromOwn(collected: readonly Sample[], own: readonly Sample[]): { missing: string[]; different: string[] } {
  const theirs = new Map(collected.map((sample) => [collectorKey(sample), sample.value]));
  return {
    missing: own.filter((sample) => !theirs.has(collectorKey(sample))).map(collectorKey),
    different: own.filter((sample) => theirs.has(collectorKey(sample)) && !Object.is(theirs.get(collectorKey(sample)), sample.value)).map(collectorKey),
  };
}

/** Polls `check` every 250 ms for up to 30 s; fails with `what` and the tail of `output()`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) assert.fail(`${what} within 30 s:\n${output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
