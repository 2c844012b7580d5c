import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OmniGenAiMetrics } from '../../instrumentation/recorders/gen-ai-metrics';
import type { OmniStatLogger } from '../../instrumentation/recorders/stat-logger';
import type { OmniMetricsHandle } from '../../register';
import { parseSamples } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';
import { register } from './harness';

const fail = (): never => {
  throw new Error('hostile');
};

function circular(): object {
  const node: Record<string, unknown> = { stage: 0, replica: 0 };
  node.self = node;
  node.timeToFirstTokensIter = [node];
  node.finishedRequests = [node];
  return node;
}

/** Made in the property itself: fast-check inspects what it generates, and a Proxy would throw there. */
type Maker = () => unknown;
const made =
  (v: unknown): Maker =>
  () =>
    v;

/** Whatever an untyped caller might pass to a public recorder method, argument by argument. */
const hostile: fc.Arbitrary<Maker> = fc.oneof(
  fc.constantFrom(undefined, null, Number.NaN, Infinity, -Infinity, -0, 0, 1, 0.25, -1, true, false, 2n ** 70n, 7n, Symbol('s'), '', 'x', [], {}).map(made),
  fc.double().map(made),
  fc.string({ maxLength: 6 }).map(made),
  fc.object({ maxDepth: 1 }).map(made),
  fc.constantFrom<Maker>(
    circular,
    () => ({ valueOf: fail, toString: fail }),
    () => new Proxy({}, { get: fail, has: fail, ownKeys: fail, getPrototypeOf: fail, getOwnPropertyDescriptor: fail }),
    () => Object.defineProperty({}, 'series', { get: fail }),
    () => ({ timeToFirstTokensIter: 5, finishedRequests: { length: 1 } }),
    () => ({ timeToFirstTokensIter: [0.1], finishedRequests: [{ finishReason: Symbol('r'), e2eLatency: 1n }] }),
    () => ({ stage: Symbol('s'), replica: {} }),
    () => Object.create(null) as object,
  ),
);

/** The stat logger's public methods, by name. */
type StatLoggerMethod = { [K in keyof OmniStatLogger]: OmniStatLogger[K] extends (...args: never[]) => unknown ? K : never }[keyof OmniStatLogger];

/**
 * Every public method of the stat logger (but `stop`, which ends it), by name, with how many
 * arguments it takes: a method added to the class and missing here fails the typecheck.
 */
const STAT_LOGGER_METHODS = {
  record: 3,
  recordAdmissionRejection: 1,
  recordSleepState: 3,
  logEngineInitialized: 1,
  addEngine: 1,
  removeEngine: 1,
  useGenAi: 1,
} as const satisfies Record<Exclude<StatLoggerMethod, 'stop'>, number>;

type Target = 'statLogger' | 'genAi';
interface Call {
  readonly target: Target;
  readonly method: string;
  readonly args: readonly Maker[];
}

const statLoggerCall: fc.Arbitrary<Call> = fc
  .constantFrom(...(Object.keys(STAT_LOGGER_METHODS) as Array<keyof typeof STAT_LOGGER_METHODS>))
  .chain((method) =>
    fc
      .array(hostile, { minLength: STAT_LOGGER_METHODS[method], maxLength: STAT_LOGGER_METHODS[method] })
      .map((args) => ({ target: 'statLogger' as const, method, args })),
  );
const genAiCall: fc.Arbitrary<Call> = fc
  .array(hostile, { minLength: 2, maxLength: 2 })
  .map((args) => ({ target: 'genAi' as const, method: 'recordIteration', args }));

describe('public recorders never throw into the caller, whatever they are given', function () {
  this.timeout(60_000);
  let handle: OmniMetricsHandle;
  let genAi: OmniGenAiMetrics;
  let provider: MeterProvider;
  before(async () => {
    handle = await register({ stagePools: [1, 2], genAiMetrics: true, features: { specDecode: { numSpeculativeTokens: 2 }, kvCacheMetrics: true } });
    provider = new MeterProvider();
    genAi = new OmniGenAiMetrics(provider.getMeter('test'), 'm');
  });
  after(async () => {
    await handle.shutdown();
    await provider.shutdown();
  });

  function invoke(call: Call): unknown {
    const receiver = (call.target === 'statLogger' ? handle.statLogger : genAi) as unknown as Record<string, (...args: unknown[]) => unknown>;
    return receiver[call.method]?.(...call.args.map((make) => make()));
  }

  it('the stat logger: record given a Symbol, BigInt, null, object or circular engine index or stats returns undefined', () => {
    const logger = handle.statLogger as OmniStatLogger;
    const values: unknown[] = [Symbol('s'), 2n ** 70n, null, undefined, {}, circular(), 'x', 1];
    withWarnings(() => {
      for (const value of values) {
        assert.equal(logger.record(value as never, value as never, 0), undefined, String(typeof value));
        assert.equal(logger.record(null, null, value as never), undefined, String(typeof value));
      }
    });
  });

  it('genAi.recordIteration: a bad engine or stats object returns undefined, and a good call after it is recorded', async () => {
    const bad: Array<[unknown, unknown]> = [
      [null, { timeToFirstTokensIter: [0.1], finishedRequests: [] }],
      [Symbol('e'), { timeToFirstTokensIter: [0.1], finishedRequests: [] }],
      [{ stage: 0, replica: 0 }, null],
      [
        { stage: 0, replica: 0 },
        { timeToFirstTokensIter: 5, finishedRequests: [] },
      ],
      [{ stage: 0, replica: 0 }, circular()],
      [new Proxy({}, { get: fail }), { timeToFirstTokensIter: [], finishedRequests: [] }],
    ];
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const withReader = new MeterProvider({ readers: [reader] });
    const metrics = new OmniGenAiMetrics(withReader.getMeter('test'), 'm');
    try {
      withWarnings(() => {
        for (const [engine, stats] of bad) assert.equal(metrics.recordIteration(engine as never, stats as never), undefined);
      });
      metrics.recordIteration({ stage: '0', replica: '1' }, { timeToFirstTokensIter: [0.25], finishedRequests: [] } as never);
      await reader.forceFlush();
      const ttft = exporter
        .getMetrics()
        .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
        .find((metric) => metric.descriptor.name === 'gen_ai.server.time_to_first_token');
      const points = ttft?.dataPoints.map((point) => [point.attributes.stage, point.attributes.replica, (point.value as { count: number }).count]);
      assert.deepEqual(points, [['0', '1', 1]]);
    } finally {
      await withReader.shutdown();
    }
  });

  it('property: any sequence of calls of every public method of the stat logger and of genAi never throws, and the exposition still parses', async () => {
    let threw = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(statLoggerCall, genAiCall), { minLength: 1, maxLength: 30 }), async (calls) => {
        withWarnings(() => {
          for (const call of calls) {
            try {
              invoke(call);
            } catch (error) {
              threw++;
              assert.fail(`${call.target}.${call.method} threw ${String(error)}`);
            }
          }
        });
        handle.statLogger?.useGenAi(undefined);
        assert.ok(parseSamples(await handle.metricsText()).length > 0);
      }),
      { numRuns: 200 },
    );
    assert.equal(threw, 0);
  });
});
