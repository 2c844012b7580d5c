import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { WIRING_PROBE_MILLIS } from '../../instrumentation/self-check/self-check-monitor';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { captureConsole, expectPrinted } from '../support/console-capture';
import { drain, FullOrchestrator, SelfCheckServing } from './self-check-host';

interface FakeInterval {
  readonly callback: () => void;
  readonly millis: number;
  cleared: boolean;
}

/**
 * Fake intervals while `body` runs: nothing fires on its own; the test fires them. The handles
 * answer `unref()` as real ones do.
 */
async function withFakeIntervals(body: (intervals: FakeInterval[]) => Promise<void>): Promise<void> {
  const realSet = globalThis.setInterval;
  const realClear = globalThis.clearInterval;
  const intervals: FakeInterval[] = [];
  globalThis.setInterval = ((callback: () => void, millis: number) => {
    const interval: FakeInterval = { callback, millis, cleared: false };
    intervals.push(interval);
    return { interval, unref: () => undefined, ref: () => undefined, hasRef: () => false };
  }) as unknown as typeof setInterval;
  globalThis.clearInterval = ((handle?: { interval?: FakeInterval }) => {
    if (handle?.interval !== undefined) handle.interval.cleared = true;
    else realClear(handle as Parameters<typeof clearInterval>[0]);
  }) as typeof clearInterval;
  try {
    await body(intervals);
  } finally {
    globalThis.setInterval = realSet;
    globalThis.clearInterval = realClear;
  }
}

const LOG_STATS_OFF =
  "omni-otel-metrics self-check: requests are flowing but logStats is off, so every vllm:omni_* family records nothing and no vllm:* family is registered: set logStats: true (vLLM's --log-stats)";

const HOOKS_ON_LOG_STATS_OFF =
  'omni-otel-metrics: OmniInstrumentation hooks attached to a handle registered with logStats off: the pipeline families drop every observation they make and no vllm:* engine family is registered (vLLM-Omni gates them on --log-stats); register with logStats: true';

describe('self-check: wiring mistakes heard within ten seconds of the first request', () => {
  let metrics: OmniMetricsHandle | undefined;
  let instrumentation: OmniInstrumentation | undefined;

  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await metrics?.shutdown();
    metrics = undefined;
  });

  const start = async (lines: string[], options: Partial<OmniMetricsOptions>): Promise<OmniMetricsHandle> => {
    metrics = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      prometheus: false,
      logIntervalSeconds: 0,
      processMetrics: false,
      logSink: { info: (line) => lines.push(line) },
      ...options,
    });
    const handle = metrics;
    // With logStats off, the hooks say so as they attach, before any request: the probe then says it again once requests flow.
    instrumentation = await expectPrinted(
      options.logStats === false ? [HOOKS_ON_LOG_STATS_OFF] : [],
      () => new OmniInstrumentation({ metrics: handle, orchestratorClass: FullOrchestrator, servingClass: SelfCheckServing, diagnosticsChannels: false }),
    );
    return metrics;
  };
  const probeOf = (intervals: FakeInterval[]): FakeInterval => {
    const probes = intervals.filter((interval) => interval.millis === WIRING_PROBE_MILLIS);
    assert.equal(probes.length, 1);
    return probes[0] as FakeInterval;
  };

  it('logStats off: says "set logStats: true" at the first probe (10 s) after requests flow, once', async () => {
    await withFakeIntervals(async (intervals) => {
      const lines: string[] = [];
      await start(lines, { logStats: false });
      const probe = probeOf(intervals);
      // No request yet: nothing to say, and the probe keeps looking.
      probe.callback();
      assert.deepEqual(lines, []);
      assert.equal(probe.cleared, false);
      const serving = new SelfCheckServing(new FullOrchestrator());
      await drain(serving, 'a', 0);
      await drain(serving, 'b', 1);
      probe.callback();
      assert.deepEqual(lines, [LOG_STATS_OFF]);
      assert.equal(probe.cleared, true);
      // The 60 s check's first tick does not repeat it (a family is warned about at two checks in a row).
      const periodic = intervals.find((interval) => interval.millis === 60_000) as FakeInterval;
      periodic.callback();
      assert.deepEqual(lines, [LOG_STATS_OFF]);
    });
  });

  it('logStats on: the first probe after requests flow says nothing and stops', async () => {
    await withFakeIntervals(async (intervals) => {
      const lines: string[] = [];
      await start(lines, { logStats: true });
      const probe = probeOf(intervals);
      await drain(new SelfCheckServing(new FullOrchestrator()), 'a', 0);
      probe.callback();
      assert.deepEqual(lines, []);
      assert.equal(probe.cleared, true);
    });
  });

  it('the periodic warning about a logStats-off family names the fix', async () => {
    await withFakeIntervals(async (intervals) => {
      const lines: string[] = [];
      await start(lines, { logStats: false, selfCheck: { intervalSeconds: 60 } });
      const periodic = intervals.find((interval) => interval.millis === 60_000) as FakeInterval;
      const serving = new SelfCheckServing(new FullOrchestrator());
      await drain(serving, 'a', 0);
      periodic.callback();
      await drain(serving, 'b', 1);
      periodic.callback();
      assert.equal(lines.length, 1);
      assert.match(
        lines[0] as string,
        /^omni-otel-metrics self-check: \d+ families received nothing while requests flowed \(2 checks in a row\): vllm:omni_[^(]+ \(log-stats-off: set logStats: true\)$/,
      );
    });
  });
});

describe('OmniInstrumentation given nothing to hook', () => {
  let metrics: OmniMetricsHandle | undefined;
  afterEach(async () => {
    await metrics?.shutdown();
    metrics = undefined;
  });

  const construct = async (config: { diagnosticsChannels?: boolean }, logStats = true): Promise<string[]> => {
    metrics = await registerOmniMetrics({ modelName: 'm', logStats, prometheus: false, logIntervalSeconds: 0, selfCheck: false, processMetrics: false });
    const handle = metrics;
    const printed = await captureConsole(() => new OmniInstrumentation({ metrics: handle, ...config }).disable());
    return printed.map((line) => `${line.method}: ${line.text}`);
  };

  it('warns at construction, naming orchestratorClass / servingClass', async () => {
    assert.deepEqual(await construct({}), [
      "warn: omni-otel-metrics: OmniInstrumentation was given no host classes: pass orchestratorClass / servingClass (the host's orchestrator and serving classes, or modules to patch them when loaded); it only hears a host that publishes on the OMNI_CHANNELS diagnostics channels (pass diagnosticsChannels: true if that is the plan)",
    ]);
    assert.deepEqual(await construct({ diagnosticsChannels: false }), [
      "warn: omni-otel-metrics: OmniInstrumentation was given no host classes: pass orchestratorClass / servingClass (the host's orchestrator and serving classes, or modules to patch them when loaded); with diagnosticsChannels off it hears nothing",
    ]);
  });

  it('says nothing when the host publishes on the channels by choice (diagnosticsChannels: true)', async () => {
    assert.deepEqual(await construct({ diagnosticsChannels: true }), []);
  });

  it('says when it attaches to a handle registered with logStats off, at once rather than a self-check later', async () => {
    assert.deepEqual(await construct({ diagnosticsChannels: true }, false), [`warn: ${HOOKS_ON_LOG_STATS_OFF}`]);
  });
});
