import { readFileSync, writeFileSync } from 'node:fs';
import { collectorNamingMarkdown } from './collector-naming';

const BEGIN = '<!-- BEGIN GENERATED OTLP NAMING (npm run docs) -->';
const END = '<!-- END GENERATED OTLP NAMING -->';

/** A page with its generated OTLP naming section replaced by the current one. */
export function withGeneratedNamingSection(page: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the page has no ${BEGIN} … ${END} section`);
  return `${page.slice(0, start + BEGIN.length)}\n${collectorNamingMarkdown()}\n${page.slice(end)}`;
}

if (require.main === module) {
  const file = process.argv[2] ?? 'docs/otlp.md';
  writeFileSync(file, withGeneratedNamingSection(readFileSync(file, 'utf8')));
  console.log(`updated the OTLP naming section in ${file}`);
}
