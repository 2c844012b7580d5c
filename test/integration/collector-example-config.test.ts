import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { needPeer } from '../support/peers/need-peer';

const CONFIG = join(__dirname, '..', '..', 'examples', 'otel-collector', 'config.yaml');

/** The Collector configuration the package ships, as the real Collector (otelcol 0.165, contrib 0.165.1) reads it. */
describe('examples/otel-collector/config.yaml and a real Collector', function () {
  const collector = needPeer('collector', this);
  it('`otelcol validate` accepts it', function () {
    const binary = collector.paths().bin['omni-otelcol'] as string;
    const result = spawnSync(binary, ['validate', '--config', `file:${CONFIG}`], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  });
});
