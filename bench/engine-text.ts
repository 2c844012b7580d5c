import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** vLLM's own `/metrics` for one engine, as prometheus_client prints it (a fixture of the test suite). */
const FIXTURE = join(__dirname, '..', 'test', 'engine-pull', 'fixtures', 'vllm-current-engine0.prom');

/**
 * A data-parallel vLLM server's `/metrics` carrying `engines` engines (`engine="first"…`): every
 * family once, its samples repeated per engine, as prometheus_client groups them.
 */
export function dataParallelEngineText(first: number, engines: number, modelName: string): string {
  const fixture = readFileSync(FIXTURE, 'utf8').replaceAll('model_name="org/current-model"', `model_name="${modelName}"`);
  const out: string[] = [];
  for (const block of fixture.split(/(?=^# HELP )/m)) {
    const lines = block.split('\n').filter((line) => line !== '');
    out.push(...lines.filter((line) => line.startsWith('#')));
    const samples = lines.filter((line) => !line.startsWith('#'));
    for (let engine = first; engine < first + engines; engine++) out.push(...samples.map((line) => line.replaceAll('engine="0"', `engine="${engine}"`)));
  }
  return `${out.join('\n')}\n`;
}
