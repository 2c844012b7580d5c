import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withGeneratedTables } from '../../views/catalog-docs';

describe('README family tables', () => {
  it('match the catalog (regenerate with `npm run docs`)', () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    assert.equal(readme, withGeneratedTables(readme), 'README tables are stale: run `npm run docs`');
  });
});
