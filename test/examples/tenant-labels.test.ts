import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startReferencePipeline, TENANT_LABELS, type ReferencePipeline } from '../../examples/reference-pipeline';
import { parseSamples, seriesOf } from '../support/exposition';
import { httpGet } from '../support/http';

/**
 * A tenant-labelled load run: the reference pipeline with `TENANT_LABELS` (tenant from the OpenAI
 * request's `user`, priority from the `x-priority` header), driven by the official openai client.
 */
describe('reference pipeline with tenant labels: per-tenant series and other', function () {
  this.timeout(60_000);
  let pipeline: ReferencePipeline;

  before(async () => {
    pipeline = await startReferencePipeline({
      port: 0,
      metricsPort: 0,
      profile: 'fast',
      imageReplicas: 0,
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
      requestLabels: TENANT_LABELS,
    });
    const client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    const ask = (i: number, user: string | undefined, priority: string | undefined) =>
      client.chat.completions.create(
        { model: pipeline.modelName, messages: [{ role: 'user', content: `number ${i}` }], max_tokens: 4, ...(user === undefined ? {} : { user }) },
        priority === undefined ? {} : { headers: { 'x-priority': priority } },
      );
    // 24 distinct users (20 keep their own series), plus 2 requests with no user and no priority.
    await Promise.all(Array.from({ length: 24 }, (_, i) => ask(i, `user-${i}`, i % 2 === 0 ? 'high' : 'low')));
    await Promise.all([ask(100, undefined, undefined), ask(101, undefined, 'urgent')]);
  });

  after(async () => {
    await pipeline?.stop();
  });

  it('shows 20 tenants of their own and other, priorities high, low and other, and totals that add up', async () => {
    const text = (await httpGet(pipeline.metricsUrl)).body;
    const success = seriesOf(text, 'vllm:omni_requests_success_total').filter((labels) => labels.finished_reason !== 'abort');
    const tenants = new Set(success.map((labels) => labels.tenant));
    assert.equal(tenants.size, 21, [...tenants].join(', '));
    assert.ok(tenants.has('other'));
    const sum = (match: Record<string, string>) =>
      parseSamples(text)
        .filter((s) => s.name === 'vllm:omni_requests_success_total' && Object.entries(match).every(([k, v]) => s.labels[k] === v))
        .reduce((total, s) => total + s.value, 0);
    assert.equal(sum({}), 26);
    assert.equal(sum({ tenant: 'other' }), 4 + 2, 'four users past maxValues, two with no user');
    assert.equal(sum({ priority: 'high' }), 12);
    assert.equal(sum({ priority: 'low' }), 12);
    assert.equal(sum({ priority: 'other' }), 2, 'no header, and a value off the allow-list');
    const e2e = seriesOf(text, 'vllm:omni_e2e_request_latency_s_count');
    assert.ok(e2e.every((labels) => labels.tenant !== undefined && labels.priority !== undefined));
    assert.equal(new Set(e2e.map((labels) => labels.tenant)).size, 21);
  });
});
