// Runs the documentation's runnable examples in a fresh project, as a reader would: every code
// block of README.md and docs/ whose first comment says "Runs as written" (for every line, or
// "on OpenTelemetry 2.x" / "3.x" for one), its TypeScript transpiled with the repository's own
// compiler to an ES module, each run with node in <app-dir>. A block that names an
// `npm install …` gets those packages first (the package itself comes from the packed tarball
// already installed there; an @opentelemetry package named without a version gets the version of
// the app's @opentelemetry/sdk-node, as the packages released with it share it). A program of
// several files: the blocks before it that say "Part of the program below, saved as <file>" are
// saved under that name, the runnable block under the name its mark gives ("this one as
// <file>"), and it runs as its mark's `node …` command says (`node --import ./telemetry.mjs
// app.mjs`). The OpenTelemetry line is read from the app's @opentelemetry/api (1.9: 2.x, 1.10:
// 3.x). Exits non-zero when an example fails or none ran.
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
const PART = /Part of the program below, saved as ([\w.-]+)/;

const installedVersion = (name) => JSON.parse(readFileSync(join(APP, 'node_modules', ...name.split('/'), 'package.json'), 'utf8')).version;
const apiVersion = installedVersion('@opentelemetry/api');
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
  let parts = [];
  for (const match of text.matchAll(/^```(ts|js)\n([\s\S]*?)^```$/gm)) {
    const head = match[2].split('\n').slice(0, 6).join('\n');
    const part = PART.exec(head);
    if (part) {
      parts.push({ file: part[1], source: match[2] });
      continue;
    }
    const mark = MARK.exec(head);
    const ownParts = parts;
    parts = [];
    if (!mark || (mark[1] !== undefined && mark[1] !== line)) continue;
    const lineNo = text.slice(0, match.index).split('\n').length + 1;
    const command = /\bnode ((?:--import \S+ )*)(\S+\.mjs)\b/.exec(mark[2]);
    examples.push({
      name: `${page.replace(/\W/g, '_')}_${lineNo}`,
      page,
      lineNo,
      source: match[2],
      install: /npm install ([^,;)\n]+)/.exec(mark[2])?.[1],
      parts: ownParts,
      file: ownParts.length > 0 && command ? command[2] : undefined,
      nodeArgs: ownParts.length > 0 && command ? command[1].trim().split(/\s+/).filter(Boolean) : [],
    });
  }
}
if (examples.length === 0) throw new Error(`no runnable example for OpenTelemetry ${line}.x in README.md or docs/`);

let failed = 0;
for (const example of examples) {
  const packages = (example.install ?? '')
    .trim()
    .split(/\s+/)
    .filter((spec) => spec !== '' && !spec.startsWith('omni-otel-metrics'))
    .map((spec) =>
      /^@opentelemetry\/[\w-]+$/.test(spec) ? `${spec}@${installedVersion(spec === '@opentelemetry/api' ? spec : '@opentelemetry/sdk-node')}` : spec,
    );
  if (packages.length > 0 && !process.env.DOC_EXAMPLES_NO_INSTALL)
    execFileSync('npm', ['install', '--no-audit', '--no-fund', ...packages], { cwd: APP, stdio: 'inherit' });
  const transpiled = (source) => ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  for (const part of example.parts) writeFileSync(join(APP, part.file), transpiled(part.source));
  const file = join(APP, example.file ?? `${example.name}.mjs`);
  writeFileSync(file, transpiled(example.source));
  process.stdout.write(`\n--- ${example.page}:${example.lineNo} (OpenTelemetry ${line}.x)\n`);
  try {
    // A program serving /metrics on the default port takes a free one here (as a reader's second run would need to).
    const env = { OTEL_EXPORTER_PROMETHEUS_PORT: '0', ...process.env };
    execFileSync(process.execPath, [...example.nodeArgs, file], { cwd: APP, stdio: 'inherit', timeout: 60_000, env });
  } catch (error) {
    failed++;
    console.error(`FAILED: ${example.page}:${example.lineNo}: ${error.message}`);
  }
}
console.log(`\n${examples.length - failed} of ${examples.length} documentation examples ran on OpenTelemetry ${line}.x`);
if (failed > 0) process.exit(1);
