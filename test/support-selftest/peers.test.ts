import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const FIXTURE = path.join(__dirname, 'fixtures', 'needs-peer.fixture.ts');
const DEBIAN_FIXTURE = path.join(__dirname, 'fixtures', 'needs-debian-peer.fixture.ts');

/**
 * Runs mocha, as `npm test` does, on a fixture suite that needs a peer, with an empty peers cache
 * and no OMNI_PEERS_BUILD: a test run builds and installs nothing, Go or root notwithstanding
 * (`hide` makes the named peers count as missing besides).
 */
function runFixture(ci: boolean, fixture = FIXTURE, hide = ''): { status: number | null; output: string } {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'omni-peers-empty-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, OMNI_PEERS_CACHE: cache, OMNI_PEERS_HIDE: hide, CI: ci ? 'true' : 'false' };
    delete env.OMNI_PEERS_BUILD;
    const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const args = [mocha, '--no-config', '-r', 'tsx/cjs', '-r', 'test/support/peers/root-hooks.ts', '--extension', 'ts', fixture];
    const result = spawnSync(process.execPath, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
    assert.deepEqual(fs.readdirSync(cache), [], 'nothing built into the cache');
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

describe('tests that need a real peer, on a machine without it', function () {
  this.timeout(120_000);

  it('skip their suites, hooks included, naming each suite once with the command that builds each peer and how long it takes', () => {
    const { status, output } = runFixture(false);
    assert.equal(status, 0, output);
    const lines = output.split('\n').filter((line) => line.includes('did not run'));
    const prometheus3 =
      'Prometheus 3 (github.com/prometheus/prometheus@v0.316.0) and its promtool, and it is not built in <cache>; `npm run peers prometheus3` builds it (about 10 minutes on 2 cores, with Go 1.26 and the Go module proxy)';
    const cacheNamed = lines.map((line) => line.replace(/ in \S*omni-peers-empty-\w+/, ' in <cache>'));
    assert.equal(cacheNamed.length, 2, output);
    assert.equal(cacheNamed[0], `  peers: 1 suite(s) did not run (the fixture suite): they need ${prometheus3}`);
    assert.ok(
      cacheNamed[1]?.startsWith(
        `  peers: 1 suite(s) did not run (the fixture suite that needs two peers): they need ${prometheus3}; and an OpenTelemetry Collector (otelcol `,
      ),
      cacheNamed[1],
    );
    assert.match(
      cacheNamed[1] ?? '',
      /, and it is not built in \S+; `npm run peers collector` builds it \(about 11 minutes on 2 cores, with Go 1\.26 and the Go module proxy\)$/,
    );
    assert.doesNotMatch(output, /FIXTURE (HOOK|TEST) RAN/);
    assert.match(output, /0 passing[\s\S]*2 pending/);
  });

  it("declared with the suite itself (Debian's Prometheus), skip that suite, its hooks included, with one line naming the apt-get command and how long it takes", () => {
    const { status, output } = runFixture(false, DEBIAN_FIXTURE, 'debian-prometheus');
    assert.equal(status, 0, output);
    assert.deepEqual(
      output.split('\n').filter((line) => line.includes('did not run')),
      [
        "  peers: 1 suite(s) did not run (the Debian fixture suite): they need Debian's Prometheus 2.42 and its promtool (package prometheus), and OMNI_PEERS_HIDE hides it; `apt-get install -y --no-install-recommends prometheus` (as root, about a minute) installs it",
      ],
    );
    assert.doesNotMatch(output, /FIXTURE (HOOK|TEST) RAN/);
    assert.match(output, /0 passing[\s\S]*1 pending/);
    assert.doesNotMatch(output, /failing/);
  });

  it('under CI=true fail the run once, before any test, naming what is missing', () => {
    const { status, output } = runFixture(true);
    assert.notEqual(status, 0, output);
    assert.equal(output.split('CI=true requires every peer').length, 2, output);
    assert.match(output, /the fixture suite/);
    assert.doesNotMatch(output, /FIXTURE TEST RAN/);
    assert.match(output, /1 failing/);
  });
});
