import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  collectorNamingMarkdown,
  collectorPrometheusName,
  COLLECTOR_TRANSLATION_STRATEGIES,
  NAMING_EXAMPLE_FAMILIES,
  type CollectorTranslationStrategy,
} from '../../exporters/otlp/collector-naming';
import { withGeneratedNamingSection } from '../../exporters/otlp/collector-naming-docs';
import type { FamilyType } from '../../views/catalog/family-definition';
import { resolveFullCatalog } from '../../views/catalog/catalog';

type Expected = Record<CollectorTranslationStrategy, string>;

/** name, unit, type → the four strategies, worked out by hand from exposition-and-otel.md §3. */
const CASES: Array<[string, string, FamilyType, Expected]> = [
  // vllm naming: no unit, so every strategy keeps the exposed name.
  ['vllm:prompt_tokens_total', '', 'counter', all('vllm:prompt_tokens_total')],
  ['vllm:e2e_request_latency_seconds', '', 'histogram', all('vllm:e2e_request_latency_seconds')],
  ['vllm:omni_e2e_request_latency_s', '', 'histogram', all('vllm:omni_e2e_request_latency_s')],
  ['vllm:kv_cache_usage_perc', '', 'gauge', all('vllm:kv_cache_usage_perc')],
  ['vllm:omni_requests_success_total', '', 'counter', all('vllm:omni_requests_success_total')],
  ['vllm:iteration_tokens_total', '', 'histogram', all('vllm:iteration_tokens_total')],
  // What units would do to the same names.
  [
    'vllm:omni_e2e_request_latency_s',
    's',
    'histogram',
    {
      UnderscoreEscapingWithSuffixes: 'vllm:omni_e2e_request_latency_s_seconds',
      NoUTF8EscapingWithSuffixes: 'vllm:omni_e2e_request_latency_s_seconds',
      UnderscoreEscapingWithoutSuffixes: 'vllm:omni_e2e_request_latency_s',
      NoTranslation: 'vllm:omni_e2e_request_latency_s',
    },
  ],
  ['vllm:e2e_request_latency_seconds', 's', 'histogram', all('vllm:e2e_request_latency_seconds')],
  [
    'vllm:kv_cache_usage_perc',
    '1',
    'gauge',
    {
      UnderscoreEscapingWithSuffixes: 'vllm:kv_cache_usage_perc_ratio',
      NoUTF8EscapingWithSuffixes: 'vllm:kv_cache_usage_perc_ratio',
      UnderscoreEscapingWithoutSuffixes: 'vllm:kv_cache_usage_perc',
      NoTranslation: 'vllm:kv_cache_usage_perc',
    },
  ],
  // otel naming.
  [
    'vllm.prompt_tokens',
    '{token}',
    'counter',
    {
      UnderscoreEscapingWithSuffixes: 'vllm_prompt_tokens_total',
      NoUTF8EscapingWithSuffixes: 'vllm.prompt_tokens_total',
      UnderscoreEscapingWithoutSuffixes: 'vllm_prompt_tokens',
      NoTranslation: 'vllm.prompt_tokens',
    },
  ],
  [
    'vllm.omni_e2e_request_latency',
    's',
    'histogram',
    {
      UnderscoreEscapingWithSuffixes: 'vllm_omni_e2e_request_latency_seconds',
      NoUTF8EscapingWithSuffixes: 'vllm.omni_e2e_request_latency_seconds',
      UnderscoreEscapingWithoutSuffixes: 'vllm_omni_e2e_request_latency',
      NoTranslation: 'vllm.omni_e2e_request_latency',
    },
  ],
  [
    'vllm.omni_transfer_size',
    'By',
    'histogram',
    {
      UnderscoreEscapingWithSuffixes: 'vllm_omni_transfer_size_bytes',
      NoUTF8EscapingWithSuffixes: 'vllm.omni_transfer_size_bytes',
      UnderscoreEscapingWithoutSuffixes: 'vllm_omni_transfer_size',
      NoTranslation: 'vllm.omni_transfer_size',
    },
  ],
  [
    'gen_ai.server.time_to_first_token',
    's',
    'histogram',
    {
      UnderscoreEscapingWithSuffixes: 'gen_ai_server_time_to_first_token_seconds',
      NoUTF8EscapingWithSuffixes: 'gen_ai.server.time_to_first_token_seconds',
      UnderscoreEscapingWithoutSuffixes: 'gen_ai_server_time_to_first_token',
      NoTranslation: 'gen_ai.server.time_to_first_token',
    },
  ],
  // Rule corners: per-units, `total` in the middle, collapsed underscores, a leading digit.
  [
    'net.throughput',
    'By/s',
    'gauge',
    {
      UnderscoreEscapingWithSuffixes: 'net_throughput_bytes_per_second',
      NoUTF8EscapingWithSuffixes: 'net.throughput_bytes_per_second',
      UnderscoreEscapingWithoutSuffixes: 'net_throughput',
      NoTranslation: 'net.throughput',
    },
  ],
  [
    'requests_total_bytes',
    '',
    'counter',
    {
      UnderscoreEscapingWithSuffixes: 'requests_bytes_total',
      NoUTF8EscapingWithSuffixes: 'requests_total_bytes_total',
      UnderscoreEscapingWithoutSuffixes: 'requests_total_bytes',
      NoTranslation: 'requests_total_bytes',
    },
  ],
  [
    'a__b',
    '',
    'gauge',
    { UnderscoreEscapingWithSuffixes: 'a_b', NoUTF8EscapingWithSuffixes: 'a__b', UnderscoreEscapingWithoutSuffixes: 'a__b', NoTranslation: 'a__b' },
  ],
  [
    '2xx.responses',
    '',
    'counter',
    {
      UnderscoreEscapingWithSuffixes: '_2xx_responses_total',
      NoUTF8EscapingWithSuffixes: '2xx.responses_total',
      UnderscoreEscapingWithoutSuffixes: '_2xx_responses',
      NoTranslation: '2xx.responses',
    },
  ],
];

function all(name: string): Expected {
  return { UnderscoreEscapingWithSuffixes: name, NoUTF8EscapingWithSuffixes: name, UnderscoreEscapingWithoutSuffixes: name, NoTranslation: name };
}

describe('collectorPrometheusName: OTLP names after a collector translation', () => {
  for (const [name, unit, type, expected] of CASES) {
    it(`${name} (${type}, unit ${JSON.stringify(unit)})`, () => {
      for (const strategy of COLLECTOR_TRANSLATION_STRATEGIES) {
        assert.equal(collectorPrometheusName(name, unit, type, strategy), expected[strategy], strategy);
      }
    });
  }

  it('vllm naming: every catalog family comes out as the direct endpoint prints it, under every strategy (but two deprecated vLLM names)', () => {
    // The collector drops a counter's inner `total` token before appending `_total`: vLLM's
    // deprecated kv_offload_total_{bytes,time} cannot survive that strategy (README says so).
    const collapsed: Readonly<Record<string, string>> = {
      'vllm:kv_offload_total_bytes_total': 'vllm:kv_offload_bytes_total',
      'vllm:kv_offload_total_time_total': 'vllm:kv_offload_time_total',
    };
    for (const family of resolveFullCatalog().families) {
      for (const strategy of COLLECTOR_TRANSLATION_STRATEGIES) {
        const expected = strategy === 'UnderscoreEscapingWithSuffixes' ? (collapsed[family.name] ?? family.name) : family.name;
        assert.equal(collectorPrometheusName(family.name, '', family.type, strategy), expected, `${family.name} / ${strategy}`);
      }
    }
  });

  it('docs/otlp.md carries the generated section as it is now (regenerate with `npm run docs`)', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'otlp.md'), 'utf8');
    assert.equal(page, withGeneratedNamingSection(page), 'docs/otlp.md naming section is stale: run `npm run docs`');
  });

  it('the docs section is generated from the catalog, with one row per naming scheme per example family', () => {
    const markdown = collectorNamingMarkdown();
    for (const key of NAMING_EXAMPLE_FAMILIES) {
      const family = resolveFullCatalog().byKey(key);
      assert.ok(family);
      const vllmRow = markdown.split('\n').find((line) => line.startsWith(`| \`${family.name}\` | \`vllm\` |`));
      assert.ok(vllmRow, `${family.name} vllm row`);
      assert.equal(vllmRow.split('✓').length - 1, COLLECTOR_TRANSLATION_STRATEGIES.length, `${family.name}: identical under every strategy`);
      assert.ok(markdown.includes(`| \`${family.name}\` | \`otel\` | \`${family.otelName}\` |`), `${family.name} otel row`);
    }
    assert.ok(
      markdown.includes('`vllm:omni_e2e_request_latency_s` | `otel` | `vllm.omni_e2e_request_latency` | `s` | `vllm_omni_e2e_request_latency_seconds` |'),
    );
    assert.ok(markdown.includes('`gen_ai_client_token_usage`'));
  });
});
