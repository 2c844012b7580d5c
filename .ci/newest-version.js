// Prints the newest published version of a package within a range (`npm view` lists the matches
// in publication order, not by version).
//   node .ci/newest-version.js <package> <range>
'use strict';
const { execFileSync } = require('node:child_process');

const [name, range] = process.argv.slice(2);
if (!name || !range) throw new Error('usage: node .ci/newest-version.js <package> <range>');
const listed = JSON.parse(execFileSync('npm', ['view', `${name}@${range}`, 'version', '--json'], { encoding: 'utf8' }) || '[]');
const parts = (version) => version.split(/[.+-]/).slice(0, 3).map(Number);
const newer = (a, b) => {
  const [x, y] = [parts(a), parts(b)];
  const index = x.findIndex((part, i) => part !== y[i]);
  return index >= 0 && x[index] > y[index];
};
const versions = [].concat(listed).filter((version) => !version.includes('-'));
if (versions.length === 0) throw new Error(`no published version of ${name} matches ${range}`);
console.log(versions.reduce((best, version) => (newer(version, best) ? version : best)));
