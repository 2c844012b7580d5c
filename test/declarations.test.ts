import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');
const ENTRIES = ['omni-otel-metrics'];

/**
 * The built `.d.ts` / `.d.mts` as a consumer compiles them with TypeScript's strictest library
 * settings (`tsc --init` now writes `types: []`; `skipLibCheck: false` checks every declaration;
 * `exactOptionalPropertyTypes`, which `tsc --init` turns on too, tells `x?: T` from `x?: T | undefined`):
 * a project of its own whose node_modules hold the package, the OpenTelemetry packages and
 * @types/node, importing every entry from CommonJS and from ESM. Needs `dist/` (`npm run build`,
 * which `npm test` runs first).
 */
describe('the built declarations', () => {
  let project: string | undefined;

  after(() => {
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
  });

  it('compile under types: [], skipLibCheck: false and exactOptionalPropertyTypes, from CommonJS and from ESM', async function () {
    this.timeout(120_000);
    project = mkdtempSync(join(tmpdir(), 'omni-declarations-'));
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, '@types'), { recursive: true });
    symlinkSync(ROOT, join(modules, 'omni-otel-metrics'), 'dir');
    symlinkSync(join(ROOT, 'node_modules', '@opentelemetry'), join(modules, '@opentelemetry'), 'dir');
    symlinkSync(join(ROOT, 'node_modules', 'yaml'), join(modules, 'yaml'), 'dir');
    symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(modules, '@types', 'node'), 'dir');
    const imports = ENTRIES.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
    const uses = `export const entries = [${ENTRIES.map((_, i) => `entry${i}`).join(', ')}];\n`;
    writeFileSync(join(project, 'use-cjs.cts'), `${imports}\n${uses}`);
    writeFileSync(join(project, 'use-esm.mts'), `${imports}\n${uses}`);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          types: [],
          skipLibCheck: false,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
        },
        files: ['use-cjs.cts', 'use-esm.mts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? '' }),
    );
    assert.deepEqual(result, { code: 0, stdout: '' });
  });
});
