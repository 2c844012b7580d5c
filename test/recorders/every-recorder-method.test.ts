import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OrchestratorAggregator } from '../../instrumentation/recorders/orchestrator-aggregator';
import type { OmniMetricsHandle } from '../../register';
import { parseSamples } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';
import { register } from './harness';

const fail = (): never => {
  throw new Error('hostile');
};

/** An object every operation on which throws: property reads, `in`, keys, prototype, iteration. */
function throwingProxy(): object {
  return new Proxy({}, { get: fail, has: fail, ownKeys: fail, getPrototypeOf: fail, getOwnPropertyDescriptor: fail });
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** An iterable whose iterator throws after one element. */
function* throwingIterable(): Generator<unknown> {
  yield { stage: 0, replica: 0, outputsQueueSize: 1, inflight: 1 };
  throw new Error('hostile iterator');
}

/**
 * A hostile value, built in the property itself: fast-check inspects what it generates (a Proxy
 * would throw there), so the arbitraries produce makers.
 */
type Maker = () => unknown;
const value =
  (v: unknown): Maker =>
  () =>
    v;

const leaf: fc.Arbitrary<Maker> = fc.oneof(
  fc.double().map(value),
  fc.integer({ min: -3, max: 5 }).map(value),
  fc.constantFrom(undefined, null, Number.NaN, Infinity, -Infinity, -0, true, 2n ** 70n, Symbol('s'), 'audio', 'image', 'diffusion', '').map(value),
  fc.string({ maxLength: 6 }).map(value),
  fc.constantFrom<Maker>(
    () => ({ valueOf: fail, toString: fail }),
    () => Object.defineProperty({}, 'length', { get: fail }),
    throwingProxy,
    revokedProxy,
    throwingIterable,
  ),
);

/** An object whose fields are made by `makers` (nested makers are objects of their own). */
function objectOf(makers: Partial<Record<string, Maker>>): Maker {
  return () => Object.fromEntries(Object.entries(makers).map(([key, make]) => [key, make?.()]));
}

function arrayOf(makers: Maker[]): Maker {
  return () => makers.map((make) => make());
}

/** The fields the recorders' input objects have, each hostile; nested where the recorders read deeper. */
const FIELDS = [
  'stageId',
  'replicaId',
  'outputType',
  'arrivalTs',
  'nowTs',
  'sampleRate',
  'channels',
  'thresholdS',
  'stageType',
  'stageGenTimeMs',
  'numInferenceSteps',
  'outputUnitType',
  'outputUnitCount',
  'imagePixels',
  'peakMemoryMb',
  'schedulerQueueWaitS',
  'audioGeneratedFrames',
  'fromStage',
  'toStage',
  'requestId',
  'sizeBytes',
  'txTimeMs',
  'rxTransferBytes',
  'rxDecodeTimeMs',
  'rxInFlightTimeMs',
  'stage',
  'replica',
  'inflight',
  'outputsQueueSize',
  'block_size',
] as const;
const shallow = fc.record(Object.fromEntries(FIELDS.map((field) => [field, leaf])), { requiredKeys: [] }).map(objectOf);
const input: fc.Arbitrary<Maker> = fc.oneof(
  leaf,
  shallow,
  fc
    .record(
      {
        replicaId: fc.oneof(fc.constant(value(0)), leaf),
        outputType: fc.oneof(fc.constant(value('audio')), leaf),
        stageMetrics: fc.oneof(shallow, leaf),
        breakdown: fc.oneof(shallow, leaf),
        multimodalOutput: fc.oneof(fc.record({ audio: fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }).map(arrayOf)), sample_rate: leaf }).map(objectOf), leaf),
        chunkArrivalTimesS: fc.oneof(fc.array(leaf, { minLength: 1, maxLength: 3 }).map(arrayOf), leaf),
        chunkBytes: fc.oneof(fc.array(leaf, { maxLength: 3 }).map(arrayOf), leaf),
      },
      { requiredKeys: [] },
    )
    .map(objectOf),
  fc.array(fc.oneof(shallow, leaf), { maxLength: 3 }).map(arrayOf),
);

describe('every public recorder method under hostile arguments', function () {
  this.timeout(60_000);
  let handle: OmniMetricsHandle;
  before(async () => {
    handle = await register({
      stagePools: [1, 2],
      features: { specDecode: { numSpeculativeTokens: 2 }, kvConnector: 'nixl', lora: { maxLoras: 1 }, kvCacheMetrics: true, corruptedRequests: true },
    });
  });
  after(() => handle.shutdown());

  // Every public recording method (the lifecycle ones, `stop` and `useGenAi`, belong to the handle).
  const recorders: Array<[string, (h: OmniMetricsHandle) => object, readonly string[]]> = [
    ['pipeline', (h) => h.pipeline, ['setRunning', 'setWaiting', 'requestSucceeded', 'requestFailed', 'observeTokens']],
    [
      'audio',
      (h) => h.audio,
      [
        'observeAudioTtfp',
        'observeAudioDuration',
        'observeAudioRtf',
        'incAudioFrames',
        'observeAudioUnderrun',
        'incAudioContinuityOk',
        'incAudioSkipped',
        'observeModalityAtFinalize',
        'observeAudioFirstPacket',
        'observeAudioStreamingFinalize',
      ],
    ],
    [
      'stageService',
      (h) => h.stageService,
      [
        'observeStageGenTime',
        'observeStageInQueue',
        'observeQueueWait',
        'setReplicaWaiting',
        'forgetReplicaWaiting',
        'observeNumInferenceSteps',
        'incImageCount',
        'observeImagePixels',
        'setPeakMemory',
        'incRequestsFailed',
        'observeKvWait',
        'observeStageFinished',
      ],
    ],
    ['diffusion', (h) => h.diffusion, ['observeImageTtfp', 'observeDiffusionFinalize']],
    ['transfer', (h) => h.transfer, ['observeSize', 'observeTxTime', 'observeRxTime', 'observeInFlightTime']],
    ['stageReplica', (h) => h.stageReplica, ['observe']],
    ['statLogger', (h) => h.statLogger as object, ['record', 'recordSleepState', 'logEngineInitialized', 'addEngine', 'removeEngine']],
    [
      'OrchestratorAggregator',
      (h) => new OrchestratorAggregator({ transferEmitter: h.transfer, replicaResolver: () => 0 }),
      ['recordTransferTx', 'recordTransferRx', 'cacheReplica', 'onFinalizeRequest'],
    ],
  ];

  for (const [name, recorderOf, methods] of recorders) {
    it(`${name}: no method throws, and the scrape stays well formed`, async () => {
      const recorder = recorderOf(handle) as Record<string, (...args: unknown[]) => unknown>;
      for (const method of methods) assert.equal(typeof recorder[method], 'function', `${name}.${method}`);
      withWarnings(() =>
        fc.assert(
          fc.property(fc.constantFrom(...methods), fc.array(input, { maxLength: 5 }), (method, makers) => {
            const args = makers.map((make) => make());
            assert.doesNotThrow(() => recorder[method]?.(...args), `${name}.${method}`);
          }),
          { numRuns: 400 },
        ),
      );
      assert.ok(parseSamples(await handle.metricsText()).length > 0);
    });
  }
});
