import { resolveFullCatalog, type FamilyKey, type ResolvedCatalog } from '../../views/catalog/catalog';
import type { FamilyType } from '../../views/catalog/family-definition';
import { GEN_AI_METRICS } from '../../views/catalog/gen-ai-families';

/**
 * The name-translation strategies of the Collector's `prometheus` exporter (`translation_strategy`),
 * Prometheus's own OTLP receiver (`otlp.translation_strategy`) and the `prometheus/otlptranslator`
 * library they share.
 */
export type CollectorTranslationStrategy =
  'UnderscoreEscapingWithSuffixes' | 'NoUTF8EscapingWithSuffixes' | 'UnderscoreEscapingWithoutSuffixes' | 'NoTranslation';

export const COLLECTOR_TRANSLATION_STRATEGIES: readonly CollectorTranslationStrategy[] = Object.freeze([
  'UnderscoreEscapingWithSuffixes',
  'NoUTF8EscapingWithSuffixes',
  'UnderscoreEscapingWithoutSuffixes',
  'NoTranslation',
]);

/** OTLP → Prometheus unit words (UCUM annotations `{…}` are dropped; `1` adds nothing). */
const UNIT_WORDS: Readonly<Record<string, string>> = {
  d: 'days',
  h: 'hours',
  min: 'minutes',
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  KiBy: 'kibibytes',
  MiBy: 'mebibytes',
  GiBy: 'gibibytes',
  TiBy: 'tibibytes',
  KBy: 'kilobytes',
  MBy: 'megabytes',
  GBy: 'gigabytes',
  TBy: 'terabytes',
  m: 'meters',
  V: 'volts',
  A: 'amperes',
  J: 'joules',
  W: 'watts',
  g: 'grams',
  Cel: 'celsius',
  Hz: 'hertz',
  '1': '',
  '%': 'percent',
};
const PER_UNIT_WORDS: Readonly<Record<string, string>> = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week', mo: 'month', y: 'year' };

/**
 * The Prometheus name a collector gives an OTLP metric (`type` `counter` = monotonic sum), by the
 * rules of exposition-and-otel.md §3: escaping strategies replace characters outside
 * `[a-zA-Z0-9_:]` with `_` (colons survive); suffix strategies append the unit word unless the
 * name already has it as a token (`_seconds` stays, `_s` gains `_seconds`), move/add `_total` on
 * counters and `_ratio` on gauges of unit `1`; the other two add nothing.
 */
export function collectorPrometheusName(name: string, unit: string, type: FamilyType, strategy: CollectorTranslationStrategy): string {
  switch (strategy) {
    case 'UnderscoreEscapingWithSuffixes':
      return escapedWithSuffixes(name, unit, type);
    case 'NoUTF8EscapingWithSuffixes':
      return utf8WithSuffixes(name, unit, type);
    case 'UnderscoreEscapingWithoutSuffixes':
      return noLeadingDigit(
        name
          .split(/[^a-zA-Z0-9:_]+/)
          .filter(Boolean)
          .join('_'),
      );
    case 'NoTranslation':
      return name;
  }
}

function escapedWithSuffixes(name: string, unit: string, type: FamilyType): string {
  // Underscores separate tokens too, so runs of them collapse.
  let tokens = name.split(/[^a-zA-Z0-9:]+/).filter(Boolean);
  const [main, per] = unitSuffixes(unit).map(cleanUnit);
  const mainToken = main !== '' && !tokens.includes(main) ? main : '';
  const perToken = per !== '' && !tokens.includes(per) ? per : '';
  if (mainToken) tokens.push(mainToken);
  if (perToken) tokens.push(perToken);
  if (type === 'counter') tokens = [...tokens.filter((t) => t !== 'total'), 'total'];
  if (unit === '1' && type === 'gauge') tokens = [...tokens.filter((t) => t !== 'ratio'), 'ratio'];
  return noLeadingDigit(tokens.join('_'));
}

function utf8WithSuffixes(name: string, unit: string, type: FamilyType): string {
  const ratio = unit === '1' && type === 'gauge';
  const total = type === 'counter';
  const [main, per] = unitSuffixes(unit);
  let result = name;
  if (ratio) result = trimSuffix(result, 'ratio');
  if (total) result = trimSuffix(result, 'total');
  if (per) result = trimSuffix(result, per);
  if (main && !result.endsWith(main)) result += `_${main}`;
  if (per) result += `_${per}`;
  if (total) result += '_total';
  if (ratio) result += '_ratio';
  return result;
}

/** Main and `per_…` unit words of a UCUM unit such as `By/s`. */
function unitSuffixes(unit: string): [string, string] {
  const [mainPart = '', perPart] = unit.split(/\/(.*)/s);
  const mainUnit = mainPart.trim();
  const main = mainUnit !== '' && !/[{}]/.test(mainUnit) ? (UNIT_WORDS[mainUnit] ?? mainUnit) : '';
  const perUnit = perPart?.trim() ?? '';
  const per = perUnit !== '' && !/[{}]/.test(perUnit) ? `per_${PER_UNIT_WORDS[perUnit] ?? perUnit}` : '';
  return [main, per];
}

function cleanUnit(word: string): string {
  return word
    .replace(/[^a-zA-Z0-9:]/g, '_')
    .replace(/__+/g, '_')
    .replace(/^_/, '')
    .replace(/_$/, '');
}

function trimSuffix(name: string, suffix: string): string {
  return name.endsWith(suffix) && name.length > suffix.length + 1 ? name.slice(0, -(suffix.length + 1)) : name;
}

function noLeadingDigit(name: string): string {
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** A counter, a `_seconds` histogram, a `_s` histogram, a `_perc` gauge, an omni counter, a bytes histogram, the two goodput counters (`slo`). */
export const NAMING_EXAMPLE_FAMILIES: readonly FamilyKey[] = Object.freeze([
  'upstream.promptTokens',
  'upstream.e2eRequestLatencySeconds',
  'pipeline.e2eRequestLatency',
  'upstream.kvCacheUsagePerc',
  'pipeline.requestsSuccess',
  'pipeline.transferSize',
  'pipeline.requestsGood',
  'pipeline.sloMisses',
] as FamilyKey[]);

/**
 * The section of docs/otlp.md on OTLP naming: what representative families are called over OTLP under
 * each naming scheme, and what a collector's Prometheus translation makes of them. Generated from
 * the catalog so the table cannot drift from the code.
 */
export function collectorNamingMarkdown(catalog: ResolvedCatalog = resolveFullCatalog()): string {
  const code = (text: string): string => (text === '' ? '–' : `\`${text}\``);
  const header = `| direct \`/metrics\` | naming | OTLP name | unit | ${COLLECTOR_TRANSLATION_STRATEGIES.join(' | ')} |`;
  const divider = `|${' --- |'.repeat(4 + COLLECTOR_TRANSLATION_STRATEGIES.length)}`;
  const row = (direct: string, naming: string, name: string, unit: string, type: FamilyType): string => {
    const cells = COLLECTOR_TRANSLATION_STRATEGIES.map((strategy) => {
      const translated = collectorPrometheusName(name, unit, type, strategy);
      return translated === direct ? `${code(translated)} ✓` : code(translated);
    });
    return `| ${code(direct)} | ${naming} | ${code(name)} | ${code(unit)} | ${cells.join(' | ')} |`;
  };
  const familyRows: string[] = [];
  for (const key of NAMING_EXAMPLE_FAMILIES) {
    const family = catalog.byKey(key);
    if (family === undefined) continue;
    familyRows.push(row(family.name, '`vllm`', family.name, '', family.type));
    familyRows.push(row(family.name, '`otel`', family.otelName, family.unit, family.type));
  }
  // The direct endpoint shows them too, with invalid characters replaced and no unit suffix.
  const genAiRows = Object.values(GEN_AI_METRICS).map((metric) =>
    row(collectorPrometheusName(metric.name, '', 'histogram', 'UnderscoreEscapingWithoutSuffixes'), 'any', metric.name, metric.unit, 'histogram'),
  );

  return [
    '## Metric names over OTLP',
    '',
    'Views rename every stream before any reader sees it, so OTLP carries the same names as the',
    'Prometheus endpoint or OpenTelemetry-style ones, chosen with `naming`:',
    '',
    '- `vllm` (default): the exact vLLM names (`vllm:` colons, `_total` on counters) and **no unit**.',
    "  Whatever translation strategy the collector (or Prometheus's OTLP receiver) uses, the",
    '  Prometheus name is the one the direct `/metrics` endpoint prints: a counter already ends in',
    '  `_total`, and without a unit nothing adds `_seconds` to a `_s` histogram or `_ratio` to a',
    "  `_perc` gauge. One exception the collector makes: vLLM's deprecated",
    '  `vllm:kv_offload_total_bytes_total` and `vllm:kv_offload_total_time_total` lose their inner',
    '  `total` word under the suffix strategy with underscore escaping (the default), arriving as',
    '  `vllm:kv_offload_bytes_total` and `vllm:kv_offload_time_total`; their flat replacements do not.',
    '- `otel`: colons become dots, the unit token leaves the name and travels as a UCUM unit',
    '  (`s`, `By`, `1`, `{token}`). Suffix strategies add the unit word and `_total` back, but the',
    '  `vllm:` colon is gone for good and `_s` histograms become `_seconds`, so dashboards keyed on',
    '  vLLM names do not match.',
    '',
    'What a collector makes of each name (✓ = identical to the direct endpoint). Prometheus 3.16',
    "stores exactly these names from the package's OTLP push, under each `otlp.translation_strategy`",
    'and both naming schemes (checked against the real server with `--web.enable-otlp-receiver`; the',
    'transfer-size rows and the GenAI rows follow the same rules, not pushed in that check):',
    '',
    header,
    divider,
    ...familyRows,
    '',
    'With `genAiMetrics: true` the GenAI semantic-convention histograms are added under their',
    'semconv names and units, whatever the naming scheme (the direct endpoint prints them with',
    'dots replaced by underscores and no unit suffix):',
    '',
    header,
    divider,
    ...genAiRows,
    '',
    "Strategies: `UnderscoreEscapingWithSuffixes` is the default of the Collector's `prometheus`",
    "exporter and of Prometheus's OTLP receiver; `prometheusremotewrite` behaves like it, or like",
    '`UnderscoreEscapingWithoutSuffixes` with `add_metric_suffixes: false`. Escaping keeps colons.',
    'See `examples/otel-collector/config.yaml` for a collector that reproduces the direct endpoint.',
    '',
  ].join('\n');
}
