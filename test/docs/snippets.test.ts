import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { loadMetricsConfig } from '../../views/catalog/metrics-config';
import { codeBlocks, documentationPages, readPage, ROOT } from './doc-pages';

/**
 * What a snippet may use without declaring it, as the text around it says: the host's classes it
 * instruments, the handle an earlier snippet registered, the application's logger. A snippet that
 * declares one of these itself (an import, a `const metrics`) shadows it.
 */
const PRELUDE = `
import type { OmniMetricsHandle, OmniRequestOutput } from 'omni-otel-metrics';
declare global {
  class Orchestrator {
    addRequest(request: { requestId: string }): void;
    cleanupRequest(requestId: string): void;
  }
  class AsyncOmni {
    generate(request: { requestId: string; prompt: string }): AsyncGenerator<OmniRequestOutput>;
  }
  const metrics: OmniMetricsHandle;
  const registerOmniMetrics: typeof import('omni-otel-metrics').registerOmniMetrics;
  const logger: { warn(line: string): void };
}
export {};
`;

const SUBPATHS: Record<string, string> = {
  'omni-otel-metrics': 'index.ts',
};

interface Snippet {
  readonly page: string;
  readonly line: number;
  readonly file: string;
  readonly code: string;
}

/** The OpenTelemetry line installed here: api 1.9 is the 2.x line, 1.10 the 3.x line. */
const INSTALLED_LINE = (JSON.parse(readFileSync(join(ROOT, 'node_modules', '@opentelemetry', 'api', 'package.json'), 'utf8')) as { version: string }).version.startsWith('1.9.')
  ? '2'
  : '3';
const RUNS_AS_WRITTEN = /Runs as written(?: on OpenTelemetry (\d)\.x)?:/;
const FRAGMENT = /Fragment: .*?(examples\/[\w./-]+)/s;
/** A file of a program of several, saved under its name beside the runnable block that follows it. */
const PART = /Part of the program below, saved as ([\w.-]+)/;

/** A block written for the other OpenTelemetry line (its imports are not installed here). */
function forOtherLine(code: string): boolean {
  const line = RUNS_AS_WRITTEN.exec(code.split('\n').slice(0, 6).join('\n'))?.[1];
  return line !== undefined && line !== INSTALLED_LINE;
}

function snippets(language: string): Snippet[] {
  return documentationPages().flatMap((page) =>
    codeBlocks(readPage(page))
      .filter((block) => block.language === language && !forOtherLine(block.code))
      .map((block) => ({ page, line: block.line, file: join(ROOT, '.docs-snippets', `${page.replace(/\W/g, '_')}_${block.line}.ts`), code: block.code })),
  );
}

describe('code in README.md and docs/', () => {
  it('every TypeScript snippet typechecks against the package, as a user would import it', function () {
    this.timeout(60_000);
    const found = snippets('ts');
    assert.ok(found.length >= 10, `found ${found.length} ts snippets`);
    const prelude = join(ROOT, '.docs-snippets', 'prelude.ts');
    // In-memory files: each snippet a module (top-level await, as an ES module application has it).
    const memory = new Map<string, string>([[prelude, PRELUDE], ...found.map((s): [string, string] => [s.file, `${s.code}\nexport {};\n`])]);
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ES2022,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      esModuleInterop: true,
      resolveJsonModule: true,
      types: ['node'],
      baseUrl: ROOT,
      paths: Object.fromEntries(Object.entries(SUBPATHS).map(([name, path]) => [name, [`./${path}`]])),
    };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.readFile = (name) => memory.get(name) ?? readFile(name);
    host.fileExists = (name) => memory.has(name) || fileExists(name);
    host.getSourceFile = (name, version, ...rest) => {
      const text = memory.get(name);
      return text === undefined ? getSourceFile(name, version, ...rest) : ts.createSourceFile(name, text, version);
    };
    const program = ts.createProgram([prelude, ...found.map((s) => s.file)], options, host);
    const problems = found.flatMap((snippet) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(snippet.file)).map((diagnostic) => {
        const at = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : 0;
        return `${snippet.page}:${snippet.line + at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      }),
    );
    assert.deepEqual(problems, []);
  });

  it('every TypeScript and JavaScript block says it runs as written (alone, or with the files before it), or is a fragment and names a whole file the package ships', () => {
    const shipped = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
    const unmarked: string[] = [];
    for (const page of documentationPages()) {
      const blocks = codeBlocks(readPage(page)).filter((one) => one.language === 'ts' || one.language === 'js');
      for (const [i, block] of blocks.entries()) {
        const head = block.code.split('\n').slice(0, 6).join('\n');
        if (RUNS_AS_WRITTEN.test(head)) continue;
        // A part names itself in the command of the runnable block it belongs to (the next one not a part).
        const part = PART.exec(head)?.[1];
        const runnable = blocks.slice(i + 1).find((next) => !PART.test(next.code.split('\n').slice(0, 6).join('\n')));
        if (part !== undefined && runnable !== undefined && RUNS_AS_WRITTEN.test(runnable.code) && runnable.code.includes(`./${part}`)) continue;
        const file = FRAGMENT.exec(head)?.[1];
        if (file !== undefined && shipped.includes(file) && existsSync(join(ROOT, file))) continue;
        unmarked.push(`${page}:${block.line}`);
      }
    }
    assert.deepEqual(unmarked, []);
  });

  it('the config file shown in docs/options.md loads', () => {
    const [yaml] = codeBlocks(readPage('docs/options.md')).filter((block) => block.language === 'yaml');
    assert.ok(yaml, 'docs/options.md shows a yaml config file');
    const dir = mkdtempSync(join(tmpdir(), 'omni-docs-'));
    try {
      const file = join(dir, 'metrics.yaml');
      writeFileSync(file, yaml.code);
      const config = loadMetricsConfig(file);
      assert.deepEqual(Object.keys(config.buckets), ['vllm:e2e_request_latency_seconds']);
      assert.deepEqual(
        config.customFamilies.map((family) => family.name),
        ['myapp:tts_cache_hits_total', 'myapp:synth_latency_seconds'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
