import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { checkMetrics } from '../../support/promtool';
import { debianPython } from '../../support/python-parity';

/** Samples in an exposition as Python prometheus_client's own parser reads it; throws with the parser's message on an error. */
export function pythonParse(format: 'text' | 'openmetrics', text: string): number {
  const script = join(__dirname, '..', '..', 'recorders', 'fixtures', 'parse_exposition.py');
  return Number(execFileSync(debianPython(), [script, format], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }));
}

/** promtool and prometheus_client's text and OpenMetrics parsers (three independent implementations) accept both renderings. */
export async function assertValidEverywhere(text: string, openMetrics: string): Promise<void> {
  const promtool = await checkMetrics(text);
  assert.equal(promtool.parseError, undefined, `promtool: ${promtool.raw}`);
  assert.doesNotThrow(() => pythonParse('text', text), 'prometheus_client text parser');
  assert.doesNotThrow(() => pythonParse('openmetrics', openMetrics), 'prometheus_client OpenMetrics parser');
}
