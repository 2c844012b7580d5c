import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withGeneratedTables } from '../../views/catalog/catalog-docs';

describe('the family tables of docs/families.md', () => {
  it('match the catalog (regenerate with `npm run docs`)', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'families.md'), 'utf8');
    assert.equal(page, withGeneratedTables(page), 'docs/families.md tables are stale: run `npm run docs`');
  });
});
