import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'minimal.ts');

describe('the minimal example (README)', () => {
  it('serves one request through the hooks and prints exactly its counters', async () => {
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
        // The self-check's shutdown summary, on the console by default: this toy host never calls submitToStage.
        'omni-otel-metrics self-check: 1 request observed; 19 families silent: vllm:omni_request_queue_wait_s, vllm:prompt_tokens_total, ' +
          'vllm:prompt_tokens_by_source_total, vllm:generation_tokens_total, vllm:request_success_total, vllm:request_prompt_tokens, ' +
          'vllm:request_generation_tokens, vllm:iteration_tokens_total, vllm:request_max_num_generation_tokens, vllm:request_params_n, ' +
          'vllm:request_prefill_kv_computed_tokens, vllm:request_num_preemptions, vllm:time_to_first_token_seconds, ' +
          'vllm:request_time_per_output_token_seconds, vllm:e2e_request_latency_seconds, vllm:request_queue_time_seconds, ' +
          'vllm:request_inference_time_seconds, vllm:request_prefill_time_seconds, vllm:request_decode_time_seconds (host-method-not-called: submitToStage)',
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
