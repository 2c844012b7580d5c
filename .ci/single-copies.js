// Checks that the project in the current directory has exactly one copy of each OpenTelemetry SDK
// package (two copies of sdk-metrics or api mean two registries, two sets of instanceof classes and
// a reader that never sees half the instruments). Prints each package's copies; exits 1 on a second
// copy or on any problem `npm ls` reports (missing or invalid dependencies, unmet peers), with its tree.
//   node .ci/single-copies.js [package ...]   (default: api, core, resources, sdk-metrics)
'use strict';
const { spawnSync } = require('node:child_process');
const { relative } = require('node:path');

const packages = process.argv.slice(2);
if (packages.length === 0) packages.push(...['api', 'core', 'resources', 'sdk-metrics'].map((name) => `@opentelemetry/${name}`));

const npm = (args) => spawnSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const shown = npm(['ls', ...packages]);
let failed = shown.status !== 0;
if (failed) process.stderr.write(`npm ls reports a problem:\n${shown.stdout}${shown.stderr}`);

for (const name of packages) {
  // --parseable prints one path per node in the tree; a deduplicated dependency repeats its path.
  const listed = npm(['ls', '--all', '--parseable', name]);
  const paths = [...new Set(listed.stdout.split('\n').filter((line) => line.endsWith(`node_modules/${name}`)))];
  const versions = paths.map((path) => `${require(`${path}/package.json`).version} (${relative(process.cwd(), path)})`);
  console.log(`${name}: ${versions.length === 1 ? versions[0] : `${versions.length} copies: ${versions.join(', ')}`}`);
  if (versions.length !== 1) failed = true;
}
process.exit(failed ? 1 : 0);
