import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniRequestOutput, RealtimeSessionRequest } from '../../instrumentation/pipeline/host-contract';
import type { LabelledRequest } from '../../instrumentation/recorders/request-labels';
import type { OmniMetricsHandle } from '../../register';
import type { OmniMetricsOptions } from '../../options';
import { OmniOptionError } from '../../views/common/option-checks';
import { sampleValue } from '../support/exposition';
import { withWarnings } from '../views/store/store-fixture';
import { finishedAudioOutput } from './fake-host';
import { quietHandle } from '../support/quiet-handle';

const M = { model_name: 'm' };
const ACTIVE = 'vllm:omni_realtime_vad_active_sessions';
const BASE: Partial<OmniMetricsOptions> = { stagePools: [1, 2], logStats: true };

const later = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/**
 * Runs `work` with the process's `unhandledRejection` listeners replaced by one that collects what
 * reaches it, then waits long enough for a rejection scheduled by `work` (5 ms timers here) to surface.
 */
async function unhandledDuring(work: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listeners = process.listeners('unhandledRejection');
  process.removeAllListeners('unhandledRejection');
  const collect = (reason: unknown): void => void seen.push(reason);
  process.on('unhandledRejection', collect);
  try {
    await work();
    await later(30);
  } finally {
    process.off('unhandledRejection', collect);
    for (const listener of listeners) process.on('unhandledRejection', listener);
  }
  return seen;
}

type TenantRequest = LabelledRequest & { readonly source?: SourceKind };

class Serving {
  async *generate(request: TenantRequest): AsyncGenerator<OmniRequestOutput> {
    yield finishedAudioOutput(request.requestId, 1, [5, 9]);
  }
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // consume
  }
}

/** What a label source does with a request, chosen by the request. */
type SourceKind = 'value' | 'throws' | 'resolves' | 'rejects' | 'rejects later' | 'thenable throwing' | 'then getter throwing' | 're-enters';
const SOURCE_KINDS: readonly SourceKind[] = [
  'value',
  'throws',
  'resolves',
  'rejects',
  'rejects later',
  'thenable throwing',
  'then getter throwing',
  're-enters',
];

/** A label source (not `async`: that is refused at construction) whose behaviour each request picks; `serving` is what a re-entering source calls. */
function hostileSource(serving: () => Serving): (request: TenantRequest) => unknown {
  return (request) => {
    switch (request.source) {
      case 'throws':
        throw new Error('source bug');
      case 'resolves':
        return Promise.resolve('acme');
      case 'rejects':
        return Promise.reject(new Error('rejected at once'));
      case 'rejects later':
        return later(5).then(() => Promise.reject(new Error('rejected later')));
      case 'thenable throwing':
        return {
          then() {
            throw new Error('then throws');
          },
        };
      case 'then getter throwing':
        return Object.defineProperty({}, 'then', {
          get() {
            throw new Error('then getter throws');
          },
        });
      case 're-enters':
        // Calls back into the host with the very request being labelled.
        void serving().generate(request);
        return 'acme';
      default:
        return 'acme';
    }
  };
}

describe('user callbacks that are async, throw, reject or re-enter never reach the host, and are counted as the docs say', function () {
  this.timeout(120_000);

  describe('label sources', () => {
    it('an async function as a label source is refused at construction with an option error naming it', async () => {
      await assert.rejects(
        async () =>
          quietHandle({
            ...BASE,
            requestLabels: [
              {
                name: 'tenant',
                from: async () => {
                  throw new Error('never read');
                },
                maxValues: 5,
              },
            ],
          }),
        (error: unknown) =>
          error instanceof OmniOptionError &&
          error.option === 'requestLabels[0].from' &&
          error.message ===
            "omni-otel-metrics: requestLabels[0].from must return the value itself, not a promise: the label is read when generate is called, before the request's first record; " +
              'read what it needs before calling generate and pass it on the request',
      );
    });

    it('a source that returns a promise which rejects (at once or later) counts the request as other, with one warning and no unhandled rejection', async () => {
      const metrics = await quietHandle({ ...BASE, requestLabels: [{ name: 'tenant', from: hostileSource(() => new Serving()), values: ['acme'] }] });
      const inst = new OmniInstrumentation({ metrics, servingClass: Serving, diagnosticsChannels: false });
      try {
        const serving = new Serving();
        let warnings: string[] = [];
        const unhandled = await unhandledDuring(async () => {
          const started = withWarnings(() =>
            (['rejects', 'rejects later', 'resolves', 'value'] as const).map((source, i) => serving.generate({ requestId: `r${i}`, source })),
          );
          warnings = started.warnings;
          for (const stream of started.result) await drain(stream);
        });
        assert.deepEqual(unhandled, []);
        assert.equal(warnings.length, 1);
        assert.match(warnings[0] ?? '', /requestLabels "tenant": its source returned a promise; .* such requests count as "other"/);
        const text = await metrics.metricsText();
        assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop', tenant: 'other' }), 3);
        assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop', tenant: 'acme' }), 1);
      } finally {
        inst.disable();
        await metrics.shutdown();
      }
    });

    it("property: whatever each request's source does, every request is counted once, under its value or other, and nothing reaches the host", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom(...SOURCE_KINDS), { minLength: 1, maxLength: 12 }), async (kinds) => {
          let serving: Serving | undefined;
          const metrics = await quietHandle({
            ...BASE,
            requestLabels: [{ name: 'tenant', from: hostileSource(() => serving as Serving), values: ['acme'] }],
          });
          const inst = new OmniInstrumentation({ metrics, servingClass: Serving, diagnosticsChannels: false });
          try {
            serving = new Serving();
            const unhandled = await unhandledDuring(async () => {
              const streams = withWarnings(() => kinds.map((source, i) => (serving as Serving).generate({ requestId: `r${i}`, source }))).result;
              for (const stream of streams) await drain(stream);
            });
            assert.deepEqual(unhandled, []);
            const text = await metrics.metricsText();
            const acme = kinds.filter((kind) => kind === 'value' || kind === 're-enters').length;
            assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop', tenant: 'acme' }) ?? 0, acme);
            assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop', tenant: 'other' }) ?? 0, kinds.length - acme);
            assert.equal(sampleValue(text, 'vllm:omni_e2e_request_latency_s_count', { ...M, tenant: 'acme' }) ?? 0, acme);
            assert.deepEqual(inst.observer.trackedRequests, { admitted: 0, generating: 0 });
          } finally {
            inst.disable();
            await metrics.shutdown();
          }
        }),
        { numRuns: 25 },
      );
    });
  });

  describe('realtime sessions', () => {
    const SERVER_VAD = { type: 'server_vad' } as const;
    let metrics: OmniMetricsHandle;
    let inst: OmniInstrumentation | undefined;
    beforeEach(async () => {
      metrics = await quietHandle(BASE);
    });
    afterEach(async () => {
      inst?.disable();
      inst = undefined;
      await metrics.shutdown();
    });
    const active = async (): Promise<number | undefined> => sampleValue(await metrics.metricsText(), ACTIVE, M);

    it('an async open that rejects never counts its session as active: 5 rejected opens leave the gauge at 0', async () => {
      class Realtime {
        async openRealtimeSession(session: RealtimeSessionRequest): Promise<string> {
          throw new Error(`cannot open ${session.sessionId}`);
        }
        closeRealtimeSession(sessionId: string): void {
          void sessionId;
        }
      }
      inst = new OmniInstrumentation({ metrics, servingClass: Realtime, diagnosticsChannels: false });
      const realtime = new Realtime();
      for (let i = 0; i < 5; i++)
        await assert.rejects(realtime.openRealtimeSession({ sessionId: `s${i}`, turnDetection: SERVER_VAD }), new Error(`cannot open s${i}`));
      assert.equal(await active(), 0);
    });

    it('an async open counts its session when it fulfils, not before; a close while it is pending cancels it', async () => {
      const opens = new Map<string, () => void>();
      class Realtime {
        openRealtimeSession(session: RealtimeSessionRequest): Promise<string> {
          return new Promise((resolve) => opens.set(session.sessionId, () => resolve(session.sessionId)));
        }
        closeRealtimeSession(sessionId: string): void {
          void sessionId;
        }
      }
      inst = new OmniInstrumentation({ metrics, servingClass: Realtime, diagnosticsChannels: false });
      const realtime = new Realtime();
      const a = realtime.openRealtimeSession({ sessionId: 'a', turnDetection: SERVER_VAD });
      const b = realtime.openRealtimeSession({ sessionId: 'b', turnDetection: SERVER_VAD });
      assert.equal(await active(), 0, 'pending opens are not active');
      opens.get('a')?.();
      assert.equal(await a, 'a', "the host's value comes back");
      assert.equal(await active(), 1);
      realtime.closeRealtimeSession('b');
      opens.get('b')?.();
      assert.equal(await b, 'b');
      assert.equal(await active(), 1, 'b was closed before its open fulfilled');
    });

    /** How the host's open behaves for one session. */
    type OpenKind = 'sync' | 'sync throws' | 'resolves' | 'rejects' | 'rejects later' | 'thenable' | 're-enters';
    const OPEN_KINDS: readonly OpenKind[] = ['sync', 'sync throws', 'resolves', 'rejects', 'rejects later', 'thenable', 're-enters'];

    it('property: whatever each open does and wherever the close comes, the gauge counts exactly the sessions opened and not closed', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ open: fc.constantFrom(...OPEN_KINDS), close: fc.constantFrom('never', 'before settling', 'after settling') }), {
            minLength: 1,
            maxLength: 10,
          }),
          async (sessions) => {
            const handle = await quietHandle(BASE);
            class Realtime {
              openRealtimeSession(session: RealtimeSessionRequest & { kind: OpenKind; depth?: number }): unknown {
                switch (session.kind) {
                  case 'sync throws':
                    throw new Error('refused');
                  case 'resolves':
                    return Promise.resolve(session.sessionId);
                  case 'rejects':
                    return Promise.reject(new Error('refused'));
                  case 'rejects later':
                    return later(1).then(() => Promise.reject(new Error('refused later')));
                  case 'thenable':
                    return { then: (resolve: (value: string) => void) => resolve(session.sessionId) };
                  case 're-enters':
                    return session.depth === undefined ? this.openRealtimeSession({ ...session, depth: 1 }) : session.sessionId;
                  default:
                    return session.sessionId;
                }
              }
              closeRealtimeSession(sessionId: string): void {
                void sessionId;
              }
            }
            const instrumentation = new OmniInstrumentation({ metrics: handle, servingClass: Realtime, diagnosticsChannels: false });
            try {
              const realtime = new Realtime();
              let expected = 0;
              const unhandled = await unhandledDuring(async () => {
                for (const [i, { open, close }] of sessions.entries()) {
                  const sessionId = `s${i}`;
                  let result: unknown;
                  try {
                    result = realtime.openRealtimeSession({ sessionId, turnDetection: SERVER_VAD, kind: open });
                  } catch {
                    continue;
                  }
                  if (close === 'before settling') realtime.closeRealtimeSession(sessionId);
                  const fulfilled = await Promise.resolve(result).then(
                    () => true,
                    () => false,
                  );
                  if (close === 'after settling') realtime.closeRealtimeSession(sessionId);
                  if (fulfilled && close === 'never') expected++;
                }
              });
              assert.deepEqual(unhandled, []);
              assert.equal(sampleValue(await handle.metricsText(), ACTIVE, M), expected);
            } finally {
              instrumentation.disable();
              await handle.shutdown();
            }
          },
        ),
        { numRuns: 25 },
      );
    });
  });
});
