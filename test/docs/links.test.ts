import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { documentationPages, headingAnchors, prose, readPage, ROOT } from './doc-pages';

/** Links into this repository on GitHub, for files the npm package does not ship. */
const REPOSITORY_BLOB = 'https://github.com/omni-otel-metrics/omni-otel-metrics/blob/main/';

interface Link {
  readonly page: string;
  readonly target: string;
}

function links(page: string): Link[] {
  const found: Link[] = [];
  for (const match of prose(readPage(page)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ page, target: match[1] });
  return found;
}

/** Whether the npm package ships `path` (relative to the root), by package.json's `files`. */
function shipped(path: string): boolean {
  const files = (JSON.parse(readPage('package.json')) as { files: string[] }).files;
  return path === 'package.json' || files.some((entry) => path === entry || path.startsWith(`${entry}/`));
}

describe('links in README.md and docs/', () => {
  const pages = documentationPages();

  it('finds the pages and their links', () => {
    assert.ok(pages.includes('docs/options.md') && pages.includes('docs/families.md'), pages.join(', '));
    assert.ok(links('README.md').some((link) => link.target === 'docs/options.md'), 'the README links the options page');
  });

  it('every page under docs/ is linked from the README', () => {
    const linked = new Set(links('README.md').map((link) => link.target.split('#')[0]));
    for (const page of pages.filter((p) => p.startsWith('docs/'))) assert.ok(linked.has(page), `README.md links ${page}`);
  });

  for (const page of pages) {
    it(`${page}: every relative link names a file the package ships, and every anchor a heading`, () => {
      for (const { target } of links(page)) {
        if (/^(https?:|mailto:)/.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? page : normalize(join(dirname(page), path));
        assert.ok(!relative(ROOT, join(ROOT, file)).startsWith('..'), `${page}: ${target} leaves the repository`);
        assert.ok(existsSync(join(ROOT, file)), `${page}: ${target} names ${file}, which does not exist`);
        assert.ok(shipped(file), `${page}: ${target} names ${file}, which package.json "files" does not ship: link it on GitHub instead`);
        if (anchor !== undefined) {
          assert.ok(file.endsWith('.md'), `${page}: ${target} has an anchor into a file that is not a page`);
          assert.ok(headingAnchors(readPage(file)).has(anchor), `${page}: ${target}: ${file} has no heading #${anchor}`);
        }
      }
    });
  }

  it('links to the repository on GitHub name files that exist', () => {
    for (const page of pages) {
      for (const { target } of links(page)) {
        if (!target.startsWith(REPOSITORY_BLOB)) continue;
        const path = target.slice(REPOSITORY_BLOB.length).split('#')[0];
        assert.ok(existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile(), `${page}: ${target} names ${path}, which does not exist`);
      }
    }
  });

  it('anchors are computed as GitHub does', () => {
    const anchors = headingAnchors('# Several processes on one host: `node:cluster`\n## `logStats`\n```\n# HELP x\n```\n## A\n## A\n');
    assert.deepEqual([...anchors], ['several-processes-on-one-host-nodecluster', 'logstats', 'a', 'a-1']);
  });
});
