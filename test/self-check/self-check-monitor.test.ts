import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { captureConsole } from '../support/console-capture';
import { drain, FullOrchestrator, OrchestratorWithoutTransfers, SelfCheckServing } from './self-check-host';

/** Two stages (1 + 2 replicas), logStats on, log lines into `sink`. */
function registerWithSink(sink: string[], selfCheck: OmniMetricsOptions['selfCheck']): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({
    modelName: 'm',
    stagePools: [1, 2],
    logStats: true,
    prometheus: false,
    logIntervalSeconds: 0,
    selfCheck,
    logSink: { info: (line) => sink.push(line) },
  });
}

const WARNING =
  'omni-otel-metrics self-check: 4 families received nothing while requests flowed (2 checks in a row): ' +
  'vllm:omni_transfer_size_bytes, vllm:omni_transfer_tx_s (host-method-not-called: sendToNextStage); ' +
  'vllm:omni_transfer_rx_s, vllm:omni_transfer_in_flight_s (host-method-not-called: receiveFromPreviousStage)';
const SUMMARY =
  'omni-otel-metrics self-check: 2 requests observed; 4 families silent: ' +
  'vllm:omni_transfer_size_bytes, vllm:omni_transfer_tx_s (host-method-not-called: sendToNextStage); ' +
  'vllm:omni_transfer_rx_s, vllm:omni_transfer_in_flight_s (host-method-not-called: receiveFromPreviousStage)';

/** Records the intervals created and cleared while `body` runs (the monitor's timer is unref'd, so it is invisible to getActiveResourcesInfo). */
async function watchIntervals(body: () => Promise<void>): Promise<{ created: number; leftRunning: number }> {
  const realSet = globalThis.setInterval;
  const realClear = globalThis.clearInterval;
  const running = new Set<unknown>();
  let created = 0;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
    const handle = realSet(...args);
    created++;
    running.add(handle);
    return handle;
  }) as typeof setInterval;
  globalThis.clearInterval = ((handle?: Parameters<typeof clearInterval>[0]) => {
    running.delete(handle);
    realClear(handle);
  }) as typeof clearInterval;
  try {
    await body();
  } finally {
    globalThis.setInterval = realSet;
    globalThis.clearInterval = realClear;
  }
  return { created, leftRunning: running.size };
}

/** Waits until `done()` or `millis` passed (the checks run on real, short intervals). */
async function until(done: () => boolean, millis = 2000): Promise<void> {
  const end = Date.now() + millis;
  while (!done() && Date.now() < end) await sleep(5);
}

describe('self-check: periodic warning and shutdown summary', () => {
  const diagLines: string[] = [];
  let instrumentation: OmniInstrumentation | undefined;

  beforeEach(() => {
    diagLines.length = 0;
    // Only the self-check's lines: other parts of the process may warn through diag meanwhile.
    const logger = (level: string) => (message: string) => {
      if (message.startsWith('omni-otel-metrics self-check:')) diagLines.push(`${level}: ${message}`);
    };
    diag.setLogger({ error: logger('error'), warn: logger('warn'), info: logger('info'), debug: () => undefined, verbose: () => undefined }, DiagLogLevel.INFO);
  });
  afterEach(() => {
    instrumentation?.disable();
    instrumentation = undefined;
    diag.disable();
  });

  it('warns once through diag and the log sink when a family stays silent across two checks, and summarises at shutdown', async () => {
    const sink: string[] = [];
    let metrics: OmniMetricsHandle | undefined;
    const intervals = await watchIntervals(async () => {
      metrics = await registerWithSink(sink, { intervalSeconds: 0.02 });
      instrumentation = new OmniInstrumentation({
        metrics,
        orchestratorClass: OrchestratorWithoutTransfers,
        servingClass: SelfCheckServing,
        diagnosticsChannels: false,
      });
      await drain(new SelfCheckServing(new OrchestratorWithoutTransfers()), 'a', 0);
      await drain(new SelfCheckServing(new OrchestratorWithoutTransfers()), 'b', 1);
      await until(() => sink.length > 0);
      assert.deepEqual(sink, [WARNING]);
      // Ten more intervals: the same silence is not repeated.
      await sleep(200);
      assert.deepEqual(sink, [WARNING]);
      assert.deepEqual(diagLines, [`warn: ${WARNING}`]);
      instrumentation.disable();
      instrumentation = undefined;
      await metrics.shutdown();
    });
    assert.deepEqual(sink, [WARNING, SUMMARY]);
    assert.deepEqual(diagLines, [`warn: ${WARNING}`, `info: ${SUMMARY}`]);
    // The self-check's timer, its wiring probe and the hooks' idle sweep: all cleared.
    assert.deepEqual(intervals, { created: 3, leftRunning: 0 });
  });

  it('stays quiet while everything flows; its summary says so', async () => {
    const sink: string[] = [];
    const metrics = await registerWithSink(sink, { intervalSeconds: 0.02 });
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FullOrchestrator, servingClass: SelfCheckServing, diagnosticsChannels: false });
    const serving = new SelfCheckServing(new FullOrchestrator());
    await drain(serving, 'a', 0);
    await sleep(30);
    await drain(serving, 'b', 1);
    await sleep(100);
    assert.deepEqual(sink, []);
    await metrics.shutdown();
    assert.deepEqual(sink, ['omni-otel-metrics self-check: 2 requests observed; every expected family received data']);
    assert.deepEqual(diagLines, ['info: omni-otel-metrics self-check: 2 requests observed; every expected family received data']);
  });

  it('with selfCheck: false, no timer, no warning and no summary; selfCheck() still answers', async () => {
    const sink: string[] = [];
    let metrics: OmniMetricsHandle | undefined;
    const intervals = await watchIntervals(async () => {
      metrics = await registerWithSink(sink, false);
    });
    assert.deepEqual(intervals, { created: 0, leftRunning: 0 });
    if (metrics === undefined) throw new Error('not registered');
    instrumentation = new OmniInstrumentation({
      metrics,
      orchestratorClass: OrchestratorWithoutTransfers,
      servingClass: SelfCheckServing,
      diagnosticsChannels: false,
    });
    const serving = new SelfCheckServing(new OrchestratorWithoutTransfers());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 1);
    await sleep(50);
    assert.deepEqual(sink, []);
    assert.equal(metrics.selfCheck().silent.length, 4);
    assert.equal(metrics.selfCheck().silent.length, 4);
    await metrics.shutdown();
    assert.deepEqual(sink, []);
    assert.deepEqual(diagLines, []);
  });

  it('summarises a run without requests in one line', async () => {
    const sink: string[] = [];
    const metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, logSink: { info: (line) => sink.push(line) } });
    await metrics.shutdown();
    await metrics.shutdown();
    assert.deepEqual(sink, ['omni-otel-metrics self-check: no requests observed, nothing to check']);
  });

  it('refuses a bad selfCheck option before starting anything', async () => {
    const base = { modelName: 'm', stagePools: [1], prometheus: false as const };
    for (const intervalSeconds of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await assert.rejects(registerOmniMetrics({ ...base, selfCheck: { intervalSeconds } }), {
        name: 'OmniOptionError',
        option: 'selfCheck',
        message: `omni-otel-metrics: selfCheck.intervalSeconds must be a finite number > 0; got ${String(intervalSeconds)}`,
      });
    }
    await assert.rejects(registerOmniMetrics({ ...base, selfCheck: true as unknown as false }), {
      name: 'OmniOptionError',
      option: 'selfCheck',
      message: 'omni-otel-metrics: selfCheck must be false or { intervalSeconds }',
    });
  });

  it('a sink that throws does not reach the host; the check goes on', async () => {
    const metrics = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      prometheus: false,
      logIntervalSeconds: 0,
      selfCheck: { intervalSeconds: 0.02 },
      logSink: {
        info: () => {
          throw new Error('sink down');
        },
      },
    });
    instrumentation = new OmniInstrumentation({
      metrics,
      orchestratorClass: OrchestratorWithoutTransfers,
      servingClass: SelfCheckServing,
      diagnosticsChannels: false,
    });
    const serving = new SelfCheckServing(new OrchestratorWithoutTransfers());
    await drain(serving, 'a', 0);
    await drain(serving, 'b', 1);
    await until(() => diagLines.length > 0);
    assert.deepEqual(diagLines, [`warn: ${WARNING}`]);
    await metrics.shutdown();
    assert.deepEqual(diagLines, [`warn: ${WARNING}`, `info: ${SUMMARY}`]);
  });
});

describe('self-check with no log sink and no diag logger: heard on the console', () => {
  let instrumentation: OmniInstrumentation | undefined;
  beforeEach(() => diag.disable());
  afterEach(() => {
    instrumentation?.disable();
    instrumentation = undefined;
  });

  it('prints the warning on console.warn and the shutdown summary on console.info, once each', async () => {
    const printed = await captureConsole(async () => {
      const metrics = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1, 2],
        logStats: true,
        prometheus: false,
        logIntervalSeconds: 0,
        selfCheck: { intervalSeconds: 0.02 },
      });
      instrumentation = new OmniInstrumentation({
        metrics,
        orchestratorClass: OrchestratorWithoutTransfers,
        servingClass: SelfCheckServing,
        diagnosticsChannels: false,
      });
      await drain(new SelfCheckServing(new OrchestratorWithoutTransfers()), 'a', 0);
      await drain(new SelfCheckServing(new OrchestratorWithoutTransfers()), 'b', 1);
      await sleep(150);
      instrumentation.disable();
      instrumentation = undefined;
      await metrics.shutdown();
    });
    assert.deepEqual(
      printed.filter((line) => line.text.startsWith('omni-otel-metrics self-check:')),
      [
        { method: 'warn', text: WARNING },
        { method: 'info', text: SUMMARY },
      ],
    );
  });

  it('a run that observed no request prints nothing on a console nobody configured', async () => {
    const printed = await captureConsole(async () => {
      const metrics = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, logIntervalSeconds: 0 });
      await metrics.shutdown();
    });
    assert.deepEqual(printed, []);
  });
});
