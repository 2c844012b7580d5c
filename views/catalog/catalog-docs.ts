import { readFileSync, writeFileSync } from 'node:fs';
import { formatGoFloat } from '../common/go-float';
import { resolveFullCatalog, type ResolvedFamily } from './catalog';
import type { FamilyGroup } from './family-definition';
import { withGeneratedSection } from './generated-section';

const BEGIN = '<!-- BEGIN GENERATED FAMILY TABLES (npm run docs) -->';
const END = '<!-- END GENERATED FAMILY TABLES -->';

const GROUP_TITLES: ReadonlyArray<[FamilyGroup, string]> = [
  ['pipeline', 'Pipeline families (`vllm:omni_*`, declared even with `logStats` off)'],
  ['stageNames', 'Stage names (`stageNames`)'],
  ['slo', 'Goodput (`slo`)'],
  ['core', 'Upstream families vLLM always registers (with `logStats` on)'],
  ['specDecode', 'Speculative decoding (`features.specDecode`)'],
  ['kvConnector', 'KV connector / NIXL (`features.kvConnector: "nixl"`)'],
  ['lora', 'LoRA (`features.lora`)'],
  ['kvCacheResidency', 'KV-block residency (`features.kvCacheMetrics`)'],
  ['corruptedRequests', 'Corrupted requests (`features.corruptedRequests`)'],
  ['kvOffload', 'KV offloading connector (`features.kvConnector: "offloading"`)'],
  ['simpleKvOffload', 'Simple CPU offload connector (`features.kvConnector: "simple-cpu-offload"`)'],
  ['hidden', 'Deprecated names (`showHiddenMetrics: true`)'],
  ['process', 'Process and Node.js runtime (`processMetrics`, default on)'],
];

/** Markdown tables of every family, grouped by when it is registered: the page docs/families.md. */
export function renderFamilyTables(): string {
  const catalog = resolveFullCatalog();
  const sections = GROUP_TITLES.map(([group, title]) => {
    const rows = catalog.families.filter((family) => family.group === group).map(row);
    return [`## ${title}`, '', '| name | type | labels | buckets | HELP |', '|---|---|---|---|---|', ...rows].join('\n');
  });
  return sections.join('\n\n');
}

function row(family: ResolvedFamily): string {
  const labels = family.labels.join(', ') + (family.info ? ' + CacheConfig fields' : '');
  const buckets = family.buckets ? bucketText(family) : '';
  const help = family.help.replace(/\|/g, '\\|');
  return `| \`${family.name}\` | ${family.type} | ${labels} | ${buckets} | ${help} |`;
}

function bucketText(family: ResolvedFamily): string {
  if (family.key.endsWith('Tokens') && family.buckets?.[0] === 1 && family.buckets[2] === 5) return '1-2-5 up to `maxModelLen`';
  const values = (family.buckets ?? []).map(formatGoFloat);
  return values.length > 6 ? `${values.slice(0, 3).join(', ')} … ${values.at(-1) ?? ''} (${values.length})` : values.join(', ');
}

/** A page with its generated section replaced by the current tables. */
export function withGeneratedTables(page: string): string {
  return withGeneratedSection(page, BEGIN, END, renderFamilyTables());
}

if (require.main === module) {
  const file = process.argv[2] ?? 'docs/families.md';
  writeFileSync(file, withGeneratedTables(readFileSync(file, 'utf8')));
  console.log(`updated the family tables in ${file}`);
}
