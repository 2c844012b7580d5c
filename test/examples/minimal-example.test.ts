import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'minimal.ts');

describe('the minimal example (README)', () => {
  it('serves one request through the hooks and prints exactly its counters, ending with no false warning', async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', EXAMPLE], { cwd: ROOT, timeout: 30_000 });
    assert.equal(stderr, '');
    assert.equal(
      stdout,
      [
        'reply: Hello',
        'reply: Hello there!',
        'vllm:omni_requests_success_total{finished_reason="stop",model_name="demo"} 1.0',
        'vllm:omni_prompt_tokens_total{model_name="demo"} 12.0',
        'vllm:omni_generation_tokens_total{model_name="demo"} 5.0',
        // The self-check's shutdown summary, on the console by default: a one-stage host without stagePools owes no engine families.
        'omni-otel-metrics self-check: 1 request observed; every expected family received data',
        '',
      ].join('\n'),
    );
  });

  it('the README shows the file as it is', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const source = readFileSync(EXAMPLE, 'utf8');
    assert.ok(readme.includes(`\`\`\`ts\n${source}\`\`\``), 'README.md carries examples/minimal.ts verbatim in a ts block');
  });
});
