import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { loadMetricsConfig } from '../../views/metrics-config';
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
  'omni-otel-metrics/views': 'views/index.ts',
  'omni-otel-metrics/instrumentation': 'instrumentation/index.ts',
  'omni-otel-metrics/stats': 'instrumentation/stats/index.ts',
  'omni-otel-metrics/exporters': 'exporters/index.ts',
};

interface Snippet {
  readonly page: string;
  readonly line: number;
  readonly file: string;
  readonly code: string;
}

function snippets(language: string): Snippet[] {
  return documentationPages().flatMap((page) =>
    codeBlocks(readPage(page))
      .filter((block) => block.language === language)
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
