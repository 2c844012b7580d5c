import assert from 'node:assert/strict';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { LimitedWarning, WarnOnce } from '../../views/common/diag-warnings';
import { consoleFallbackLevel, hasDiagLogger, packageDiag } from '../../views/common/package-diag';
import { captureConsole, withEnv } from '../support/console-capture';

/** Prints one message at each level through the package's diagnostics, with `OTEL_LOG_LEVEL` = `level`. */
function printAllAt(level: string | undefined): Promise<string[]> {
  return withEnv({ OTEL_LOG_LEVEL: level }, async () => {
    packageDiag.resetLevel();
    const lines = await captureConsole(() => {
      packageDiag.error('e');
      packageDiag.warn('w');
      packageDiag.info('i');
      packageDiag.debug('d');
      packageDiag.verbose('v');
    });
    packageDiag.resetLevel();
    return lines.map((line) => `${line.method}:${line.text}`);
  });
}

describe("the package's diagnostics: heard without a diag logger, never replacing one", () => {
  beforeEach(() => diag.disable());
  afterEach(() => {
    diag.disable();
    packageDiag.resetLevel();
  });

  it('with no diag logger installed, warnings and errors reach the console (warn level by default)', async () => {
    assert.equal(hasDiagLogger(), false);
    assert.deepEqual(await printAllAt(undefined), ['error:e', 'warn:w']);
  });

  it('honours OTEL_LOG_LEVEL as the OpenTelemetry environment specification names its values (any case)', async () => {
    assert.deepEqual(await printAllAt('NONE'), []);
    assert.deepEqual(await printAllAt('error'), ['error:e']);
    assert.deepEqual(await printAllAt('Warn'), ['error:e', 'warn:w']);
    assert.deepEqual(await printAllAt('info'), ['error:e', 'warn:w', 'info:i']);
    assert.deepEqual(await printAllAt('DEBUG'), ['error:e', 'warn:w', 'info:i', 'debug:d']);
    assert.deepEqual(await printAllAt('verbose'), ['error:e', 'warn:w', 'info:i', 'debug:d', 'debug:v']);
    assert.deepEqual(await printAllAt('ALL'), ['error:e', 'warn:w', 'info:i', 'debug:d', 'debug:v']);
    // An unknown value keeps the default rather than silencing the package.
    assert.deepEqual(await printAllAt('loud'), ['error:e', 'warn:w']);
  });

  it('reads the level the specification way', () => {
    assert.equal(consoleFallbackLevel({}), DiagLogLevel.WARN);
    assert.equal(consoleFallbackLevel({ OTEL_LOG_LEVEL: ' none ' }), DiagLogLevel.NONE);
    assert.equal(consoleFallbackLevel({ OTEL_LOG_LEVEL: '' }), DiagLogLevel.WARN);
  });

  it("with the application's diag logger installed, everything goes to it and nothing to the console; the logger is left in place", async () => {
    const received: string[] = [];
    const logger = {
      error: (m: string) => received.push(`error:${m}`),
      warn: (m: string) => received.push(`warn:${m}`),
      info: (m: string) => received.push(`info:${m}`),
      debug: (m: string) => received.push(`debug:${m}`),
      verbose: (m: string) => received.push(`verbose:${m}`),
    };
    diag.setLogger(logger, DiagLogLevel.INFO);
    const printed = await withEnv({ OTEL_LOG_LEVEL: 'all' }, () =>
      captureConsole(() => {
        packageDiag.warn('w');
        packageDiag.info('i');
        packageDiag.debug('d');
        new LimitedWarning().warn('limited');
        new WarnOnce().warn('key', 'once');
      }),
    );
    assert.deepEqual(printed, []);
    // The application's level (info) filters, not OTEL_LOG_LEVEL.
    assert.deepEqual(received, ['warn:w', 'info:i', 'warn:omni-otel-metrics: limited', 'warn:omni-otel-metrics: once']);
    assert.equal(hasDiagLogger(), true);
    diag.warn('still theirs');
    assert.equal(received.at(-1), 'warn:still theirs');
  });

  it('the rate-limited helpers print on the console when no logger is installed, one line per interval', async () => {
    let now = 0;
    const warning = new LimitedWarning(1000, () => now);
    const printed = await captureConsole(() => {
      warning.warn('a NaN observation');
      warning.warn('a NaN observation');
      warning.warn('a NaN observation');
      now = 1000;
      warning.warn('a NaN observation');
    });
    assert.deepEqual(printed, [
      { method: 'warn', text: 'omni-otel-metrics: a NaN observation' },
      { method: 'warn', text: 'omni-otel-metrics: a NaN observation (2 more like it since the last warning)' },
    ]);
  });
});
