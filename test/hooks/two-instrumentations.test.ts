import assert from 'node:assert/strict';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { sampleValue } from '../support/exposition';
import { FakeOrchestrator, FakeServing } from './fake-host';

const OPTIONS = {
  modelName: 'm',
  stagePools: [1, 2],
  logStats: true,
  prometheus: false,
  logIntervalSeconds: 0,
  selfCheck: false,
  processMetrics: false,
} as const;

/** What reached stderr (directly or through console.error) while `work` ran. */
async function stderrOf(work: () => Promise<void>): Promise<string[]> {
  const written: string[] = [];
  const realWrite = process.stderr.write;
  const realError = console.error;
  process.stderr.write = ((chunk: unknown) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  console.error = (...args: unknown[]) => void written.push(args.map(String).join(' '));
  try {
    await work();
  } finally {
    process.stderr.write = realWrite;
    console.error = realError;
  }
  return written;
}

async function serve(requestId: string): Promise<void> {
  const orchestrator = new FakeOrchestrator();
  for await (const _ of new FakeServing(orchestrator).generate({ requestId })) void _;
}

async function successes(metrics: OmniMetricsHandle): Promise<number> {
  return sampleValue(await metrics.metricsText(), 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop' }) ?? 0;
}

type Step = 'A on' | 'A off' | 'B on' | 'B off';
/** Every order of two enables and two disables, each instrumentation enabled before it is disabled. */
const ORDERS: Step[][] = [
  ['A on', 'A off', 'B on', 'B off'],
  ['A on', 'B on', 'A off', 'B off'],
  ['A on', 'B on', 'B off', 'A off'],
  ['B on', 'A on', 'A off', 'B off'],
  ['B on', 'A on', 'B off', 'A off'],
  ['B on', 'B off', 'A on', 'A off'],
];

describe('two instrumentations on one class, each feeding its own handle', () => {
  const original = FakeOrchestrator.prototype.pollEngine;
  const originalGenerate = FakeServing.prototype.generate;

  for (const order of ORDERS) {
    it(`${order.join(' → ')}: each counts exactly the requests served while it was enabled; nothing on stderr; originals back at the end`, async () => {
      const a = await registerOmniMetrics(OPTIONS);
      const b = await registerOmniMetrics(OPTIONS);
      const hooks = {
        A: new OmniInstrumentation({ metrics: a, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false, enabled: false }),
        B: new OmniInstrumentation({ metrics: b, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false, enabled: false }),
      };
      const expected = { A: 0, B: 0 };
      try {
        const stderr = await stderrOf(async () => {
          let served = 0;
          for (const step of order) {
            const [name, state] = step.split(' ') as ['A' | 'B', 'on' | 'off'];
            if (state === 'on') hooks[name].enable();
            else hooks[name].disable();
            await serve(`r${served++}`);
            for (const key of ['A', 'B'] as const) if (hooks[key].isEnabled()) expected[key]++;
          }
        });
        assert.deepEqual(stderr, []);
        assert.deepEqual({ A: await successes(a), B: await successes(b) }, expected);
        assert.equal(FakeOrchestrator.prototype.pollEngine, original);
        assert.equal(FakeServing.prototype.generate, originalGenerate);
      } finally {
        hooks.A.disable();
        hooks.B.disable();
        await a.shutdown();
        await b.shutdown();
      }
    });
  }

  it('a second instrumentation of the same handle on the same class is refused with a clear error; the first keeps counting', async () => {
    const metrics = await registerOmniMetrics(OPTIONS);
    const first = new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false });
    try {
      assert.throws(
        () => new OmniInstrumentation({ metrics, servingClass: FakeServing, diagnosticsChannels: false }),
        /another enabled OmniInstrumentation already feeds this registerOmniMetrics handle from generate\(\)/,
      );
      // The refused one changed nothing: each request is counted once.
      await serve('x');
      assert.equal(await successes(metrics), 1);
      assert.equal(first.isEnabled(), true);
    } finally {
      first.disable();
      await metrics.shutdown();
    }
  });

  it("the handle's shutdown disables the instrumentation feeding it; another handle's patch stays", async () => {
    const a = await registerOmniMetrics(OPTIONS);
    const b = await registerOmniMetrics(OPTIONS);
    const hookA = new OmniInstrumentation({ metrics: a, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false });
    const hookB = new OmniInstrumentation({ metrics: b, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false });
    try {
      await a.shutdown();
      assert.equal(hookA.isEnabled(), false);
      assert.equal(hookB.isEnabled(), true);
      await serve('y');
      assert.equal(await successes(b), 1);
    } finally {
      hookB.disable();
      await b.shutdown();
    }
    assert.equal(FakeOrchestrator.prototype.pollEngine, original);
  });
});
