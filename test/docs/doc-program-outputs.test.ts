import assert from 'node:assert/strict';
import { codeBlocks, readPage } from './doc-pages';
import { docPrograms, runDocProgram } from './doc-programs';

/** The output a page shows after its program: the first block without a language that follows it. */
function shownOutput(page: string): string {
  const blocks = codeBlocks(readPage(page));
  const program = blocks.findIndex((block) => /Runs as written/.test(block.code.split('\n')[0] ?? ''));
  const output = blocks.slice(program + 1).find((block) => block.language === '');
  assert.ok(program >= 0 && output, `${page} shows its program's output`);
  return output.code;
}

/** A port in a URL: the one a run binds varies. */
const ports = (text: string): string => text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');

/**
 * Each feature page's program prints what the page says it prints: the programs CI runs as
 * written on both OpenTelemetry lines (`.ci/doc-examples.js`), run here against this checkout.
 */
describe('the feature pages’ programs print what the pages show', function () {
  this.timeout(60_000);

  for (const page of ['docs/tenant-labels.md', 'docs/engine-pull.md', 'docs/cluster.md', 'docs/self-check.md', 'docs/otlp.md', 'docs/native-histograms.md']) {
    it(page, async () => {
      const [program] = docPrograms(page);
      assert.ok(program, `${page} has a program that runs as written`);
      // Port 0 where the program would take the default 9464: a test binds only free ports.
      const { stdout } = await runDocProgram(program, { OTEL_EXPORTER_PROMETHEUS_PORT: '0' });
      assert.equal(ports(stdout), ports(shownOutput(page)));
    });
  }
});
