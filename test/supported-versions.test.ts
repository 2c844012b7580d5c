import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

interface LockFile {
  readonly packages: Readonly<Record<string, { readonly version?: string }>>;
}

/** The README's row for an OpenTelemetry JS line in "Supported Node.js and OpenTelemetry versions". */
function supportedRow(line: string): string {
  const section = /### Supported Node\.js and OpenTelemetry versions\n([\s\S]*?)\n#/.exec(read('README.md'));
  assert.ok(section, 'README.md has a "Supported Node.js and OpenTelemetry versions" section');
  const row = section[1].split('\n').find((text) => text.startsWith(`| ${line}`));
  assert.ok(row, `the section has a row for OpenTelemetry JS ${line}`);
  return row;
}

/**
 * The supported-versions table says what CI tests: the 2.x line is the lock file's sdk-node, the
 * 3.x line the sdk-node `.ci/run` installs. A version bump in either place without the other fails here.
 * (`.ci/otel-3-line` leaves this file out of its 3.x copy, whose lock file it rewrites.)
 */
describe('supported versions (README) match what CI tests', () => {
  it('the 2.x line: Node 20 beside the lock file\u2019s @opentelemetry/sdk-node', () => {
    const lock = JSON.parse(read('package-lock.json')) as LockFile;
    const sdkNode = lock.packages['node_modules/@opentelemetry/sdk-node']?.version;
    assert.match(sdkNode ?? '', /^0\.2\d\d\.\d+$/, 'the lock file holds a 0.2xx sdk-node');
    assert.ok(supportedRow('2.x').includes(`Node 20, beside sdk-node ${sdkNode}`), `the 2.x row names sdk-node ${sdkNode}`);
  });

  it('the 3.x line: Node 22 and 24 beside the @opentelemetry/sdk-node .ci/run installs', () => {
    const pinned = /OTEL3_SDK_NODE="\$\{OTEL3_SDK_NODE:-([0-9.]+)\}"/.exec(read('.ci/run'))?.[1];
    assert.match(pinned ?? '', /^0\.3\d\d\.\d+$/, '.ci/run pins a 0.3xx sdk-node for the 3.x line');
    assert.ok(supportedRow('3.x').includes(`Node 22 and 24, beside sdk-node ${pinned}`), `the 3.x row names sdk-node ${pinned}`);
  });
});
