import assert from 'node:assert/strict';
import type { StageRequest } from '../../instrumentation/pipeline/host-contract';
import { runLoad } from '../../examples/load';
import { parseLoadArgs } from '../../examples/load/load-options';
import { parseScaleSchedule } from '../../examples/load/scale-schedule';
import type { StageInput } from '../../examples/pipeline/stage-engine';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import type { ReplicaListing } from '../../examples/server/admin-replicas';
import { parseSamples } from '../support/exposition';
import { httpGet } from '../support/http';

const TOKEN = 'scale-me';
const TALKER = 1;

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('examples: scaling a stage of the reference pipeline while it serves', function () {
  this.timeout(60_000);
  let pipeline: ReferencePipeline;
  /** Requests each (stage, replica) was given, counted on the host side. */
  const submitted = new Map<string, number>();

  const admin = (path = '', init: RequestInit = {}): Promise<Response> =>
    fetch(`${pipeline.apiUrl}/admin/replicas${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers },
    });
  const listing = async (): Promise<ReplicaListing> => (await (await admin()).json()) as ReplicaListing;
  const scrape = async (): Promise<ReturnType<typeof parseSamples>> => parseSamples((await httpGet(pipeline.metricsUrl)).body);

  before(async () => {
    pipeline = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      replicas: [1, 1, 1],
      imageReplicas: 0,
      profile: 'fast',
      simulation: { code2wav: { malformedProbability: 0 } },
      adminToken: TOKEN,
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
    });
    // Counted on the instance, below the hooks on the prototype: the host's own view of where work went.
    const orchestrator = pipeline.orchestrator;
    const submit = orchestrator.submitToStage.bind(orchestrator);
    orchestrator.submitToStage = (request: StageRequest, input: StageInput): void => {
      const key = `${request.stageId}/${request.replicaId}`;
      submitted.set(key, (submitted.get(key) ?? 0) + 1);
      submit(request, input);
    };
  });

  after(() => pipeline?.stop());

  it("refuses admin requests without the token, and lists each stage's replicas", async () => {
    const anonymous = await fetch(`${pipeline.apiUrl}/admin/replicas`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
    const wrong = await fetch(`${pipeline.apiUrl}/admin/replicas`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    assert.deepEqual((await listing()).stages, [
      { stage: 0, name: 'thinker', replicas: [0], draining: [] },
      { stage: 1, name: 'talker', replicas: [0], draining: [] },
      { stage: 2, name: 'code2wav', replicas: [0], draining: [] },
    ]);
    assert.equal((await admin('', { method: 'POST', body: JSON.stringify({ stage: 7 }) })).status, 400);
    assert.equal((await admin('/1/9', { method: 'DELETE' })).status, 404);
    assert.equal((await admin('/1/0', { method: 'DELETE' })).status, 409, 'the last replica taking requests is not drained');
  });

  it('an added replica has its vllm:* series at zero at once', async () => {
    const added = await admin('', { method: 'POST', body: JSON.stringify({ stage: TALKER }) });
    assert.equal(added.status, 201);
    assert.deepEqual(await added.json(), { stage: TALKER, replica: 1 });
    const samples = await scrape();
    const ofNew = samples.filter((s) => s.labels.stage === '1' && s.labels.replica === '1');
    assert.deepEqual(
      ofNew.filter((s) => s.name === 'vllm:num_requests_running').map((s) => s.value),
      [0],
    );
    assert.deepEqual(
      ofNew.filter((s) => s.name === 'vllm:request_success_total').map((s) => s.value),
      [0, 0, 0, 0, 0],
    );
  });

  it('a load run that scales the talker up and down: every replica counts exactly what it served, the drained one leaves no series', async () => {
    const summary = await runLoad({
      baseUrl: `${pipeline.apiUrl}/v1`,
      requests: 60,
      concurrency: 6,
      maxTokens: 16,
      audioRatio: 1,
      imageRatio: 0,
      disconnectRatio: 0,
      seed: 5,
      adminToken: TOKEN,
      scale: parseScaleSchedule('1+1@0,1-1@0.05'),
    });
    assert.deepEqual(summary.outcomes, { ok: 60, aborted: 0, failed: 0, error: 0 }, JSON.stringify(summary.errors));
    assert.deepEqual(
      summary.scaling.map(({ stage, change, replica, error }) => ({ stage, change, replica, error })),
      [
        { stage: TALKER, change: 'add', replica: 2, error: undefined },
        { stage: TALKER, change: 'drain', replica: 2, error: undefined },
      ],
    );
    // The drained replica leaves once its last request is done.
    await waitFor(async () => (await listing()).stages[TALKER]?.replicas.join() === '0,1');
    await waitFor(() => pipeline.orchestrator.numLiveRequests === 0);

    const samples = await scrape();
    assert.deepEqual(
      samples.filter((s) => s.labels.stage === '1' && s.labels.replica === '2'),
      [],
      'no series of the removed replica',
    );
    const talkerSubmits = (submitted.get('1/0') ?? 0) + (submitted.get('1/1') ?? 0) + (submitted.get('1/2') ?? 0);
    assert.equal(talkerSubmits, 60, 'every audio request went through the talker');
    for (const replica of ['0', '1']) {
      const served = samples
        .filter((s) => s.name === 'vllm:request_success_total' && s.labels.stage === '1' && s.labels.replica === replica)
        .reduce((sum, s) => sum + s.value, 0);
      assert.equal(served, submitted.get(`1/${replica}`) ?? 0, `talker replica ${replica}`);
    }
    const thinkerServed = samples.filter((s) => s.name === 'vllm:request_success_total' && s.labels.stage === '0').reduce((sum, s) => sum + s.value, 0);
    assert.equal(thinkerServed, 60, 'the thinker, never scaled, counts every request');
  });

  it('removing a replica at once fails what runs on it, counted as a stage error', async () => {
    const before = await scrape();
    const stageErrors = (samples: typeof before): number =>
      samples.filter((s) => s.name === 'vllm:omni_requests_failed_total' && s.labels.reason === 'stage_error').reduce((sum, s) => sum + s.value, 0);
    // A long request, so it is still on the talker when its replica goes.
    const request = fetch(`${pipeline.apiUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'speak at length' }], modalities: ['text', 'audio'], max_tokens: 128 }),
    });
    let onTalker: number | undefined;
    await waitFor(() => {
      onTalker = [0, 1].find((replica) => pipeline.orchestrator.stagePools[TALKER]?.inflight(replica));
      return onTalker !== undefined;
    });
    assert.equal((await admin(`/1/${onTalker}?now=true`, { method: 'DELETE' })).status, 200);
    assert.equal((await request).status, 500);
    await waitFor(async () => stageErrors(await scrape()) === stageErrors(before) + 1);
    assert.deepEqual(
      (await scrape()).filter((s) => s.labels.stage === '1' && s.labels.replica === String(onTalker)),
      [],
    );
  });

  it('load arguments: --scale needs --admin-token, and takes stage±1@seconds steps', () => {
    assert.deepEqual(parseLoadArgs(['--scale', '1+1@5,2-1@7.5', '--admin-token', 't']).scale, [
      { stage: 1, change: 'add', atSeconds: 5 },
      { stage: 2, change: 'drain', atSeconds: 7.5 },
    ]);
    assert.throws(() => parseLoadArgs(['--scale', '1+1@5']), /--scale needs --admin-token/);
    assert.throws(() => parseScaleSchedule('1+2@5'), /--scale takes steps like "1\+1@5,1-1@15"/);
  });
});
