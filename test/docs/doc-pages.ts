import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..');

/** The pages a user reads: README.md and every page under docs/, as paths relative to the root. */
export function documentationPages(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

export function readPage(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

/** One fenced code block: its language tag, its text and the line of the page it starts on (1-based). */
export interface CodeBlock {
  readonly language: string;
  readonly code: string;
  readonly line: number;
}

/** The fenced (```) code blocks of a page. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let open: { language: string; line: number; body: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = /^```(\S*)\s*$/.exec(text);
    if (open === undefined) {
      if (fence) open = { language: fence[1], line: index + 2, body: [] };
    } else if (fence && fence[1] === '') {
      blocks.push({ language: open.language, code: `${open.body.join('\n')}\n`, line: open.line });
      open = undefined;
    } else {
      open.body.push(text);
    }
  });
  return blocks;
}

/** The page's prose: fenced blocks and inline code spans blanked out, so links inside code are not read as links. */
export function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((text) => {
      if (/^```/.test(text)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : text.replace(/`[^`]*`/g, '``');
    })
    .join('\n');
}

/** The anchors GitHub (and npm) give a page's headings: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const text of markdown.split('\n')) {
    if (/^```/.test(text)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+?)\s*$/.exec(text);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
