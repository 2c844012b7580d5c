import { readFileSync, writeFileSync } from 'node:fs';
import { withGeneratedSection } from '../../views/catalog/generated-section';
import { collectorNamingMarkdown } from './collector-naming';

const BEGIN = '<!-- BEGIN GENERATED OTLP NAMING (npm run docs) -->';
const END = '<!-- END GENERATED OTLP NAMING -->';

/** A page with its generated OTLP naming section replaced by the current one. */
export function withGeneratedNamingSection(page: string): string {
  return withGeneratedSection(page, BEGIN, END, collectorNamingMarkdown());
}

if (require.main === module) {
  const file = process.argv[2] ?? 'docs/otlp.md';
  writeFileSync(file, withGeneratedNamingSection(readFileSync(file, 'utf8')));
  console.log(`updated the OTLP naming section in ${file}`);
}
