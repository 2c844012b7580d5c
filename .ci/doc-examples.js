// Runs the documentation's runnable examples in a fresh project, as a reader would: every code
// block of README.md and docs/ whose first comment says "Runs as written" (for every line, or
// "on OpenTelemetry 2.x" / "3.x" for one), its TypeScript transpiled with the repository's own
// compiler to an ES module, each run with node in <app-dir>. A block that names an
// `npm install …` gets those packages first (the package itself comes from the packed tarball
// already installed there). The OpenTelemetry line is read from the app's @opentelemetry/api
// (1.9: 2.x, 1.10: 3.x). Exits non-zero when an example fails or none ran.
//   node .ci/doc-examples.js <app-dir>      (run from the repository root)
// DOC_EXAMPLES_NO_INSTALL=1 skips the installs (a local run against an app whose packages are in place).
'use strict';
const { execFileSync } = require('node:child_process');
const { readFileSync, readdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const APP = process.argv[2];
if (!APP) throw new Error('usage: node .ci/doc-examples.js <app-dir>');
const MARK = /Runs as written(?: on OpenTelemetry (\d)\.x)?:([^\n]*)/;

const apiVersion = JSON.parse(readFileSync(join(APP, 'node_modules', '@opentelemetry', 'api', 'package.json'), 'utf8')).version;
const line = /^1\.9\./.test(apiVersion) ? '2' : '3';

const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const examples = [];
for (const page of pages) {
  const text = readFileSync(page, 'utf8');
  for (const match of text.matchAll(/^```(ts|js)\n([\s\S]*?)^```$/gm)) {
    const head = match[2].split('\n').slice(0, 6).join('\n');
    const mark = MARK.exec(head);
    if (!mark || (mark[1] !== undefined && mark[1] !== line)) continue;
    const lineNo = text.slice(0, match.index).split('\n').length + 1;
    examples.push({ name: `${page.replace(/\W/g, '_')}_${lineNo}`, page, lineNo, source: match[2], install: /npm install ([^,;)\n]+)/.exec(mark[2])?.[1] });
  }
}
if (examples.length === 0) throw new Error(`no runnable example for OpenTelemetry ${line}.x in README.md or docs/`);

let failed = 0;
for (const example of examples) {
  const packages = (example.install ?? '')
    .trim()
    .split(/\s+/)
    .filter((spec) => spec !== '' && !spec.startsWith('omni-otel-metrics'));
  if (packages.length > 0 && !process.env.DOC_EXAMPLES_NO_INSTALL)
    execFileSync('npm', ['install', '--no-audit', '--no-fund', ...packages], { cwd: APP, stdio: 'inherit' });
  const { outputText } = ts.transpileModule(example.source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const file = join(APP, `${example.name}.mjs`);
  writeFileSync(file, outputText);
  process.stdout.write(`\n--- ${example.page}:${example.lineNo} (OpenTelemetry ${line}.x)\n`);
  try {
    execFileSync(process.execPath, [file], { cwd: APP, stdio: 'inherit', timeout: 60_000 });
  } catch (error) {
    failed++;
    console.error(`FAILED: ${example.page}:${example.lineNo}: ${error.message}`);
  }
}
console.log(`\n${examples.length - failed} of ${examples.length} documentation examples ran on OpenTelemetry ${line}.x`);
if (failed > 0) process.exit(1);
