import assert from 'node:assert/strict';
import { OPTION_KEYS } from '../../settings';
import { readPage } from './doc-pages';

/** The option names in the first column of a page's options table (`| \`a\`, \`b\` | …`). */
function tableOptions(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const row of markdown.split('\n').filter((line) => /^\| `/.test(line))) {
    const first = row.split('|')[1];
    for (const match of first.matchAll(/`([A-Za-z]+)(?:[:`])/g)) names.add(match[1]);
  }
  return names;
}

function section(markdown: string, heading: string): string {
  const text = `\n${markdown}`;
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no "${heading}" section`);
  const end = text.indexOf("\n## ", start + heading.length + 2);
  return text.slice(start, end < 0 ? undefined : end);
}

describe('the options the docs name', () => {
  it('docs/options.md documents every option registerOmniMetrics accepts, and no other', () => {
    const documented = tableOptions(section(readPage('docs/options.md'), '# Options'));
    assert.deepEqual([...OPTION_KEYS].filter((key) => !documented.has(key)), [], 'options missing from docs/options.md');
    assert.deepEqual([...documented].filter((key) => !OPTION_KEYS.includes(key)), [], 'rows of docs/options.md that are not options');
  });

  it("the README's main options are options", () => {
    const named = tableOptions(section(readPage('README.md'), '## Main options'));
    assert.ok(named.size >= 8, [...named].join(', '));
    assert.deepEqual([...named].filter((key) => !OPTION_KEYS.includes(key)), []);
  });
});
