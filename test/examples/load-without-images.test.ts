import assert from 'node:assert/strict';
import { DEFAULT_LOAD_OPTIONS } from '../../examples/load/load-options';
import { planRequests } from '../../examples/load/load-plan';
import { formatSummary } from '../../examples/load/format-summary';
import { runLoad } from '../../examples/load/run-load';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';

describe('examples: the load generator against a pipeline that serves no images (IMAGE_REPLICAS=0)', function () {
  this.timeout(30_000);
  let pipeline: ReferencePipeline | undefined;

  after(async () => {
    await pipeline?.stop();
  });

  it('sends its image requests as chat requests and counts no error', async () => {
    pipeline = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: false,
      imageReplicas: 0,
      profile: 'fast',
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
    });
    const options = { baseUrl: `${pipeline.apiUrl}/v1`, requests: 12, concurrency: 3, maxTokens: 8, disconnectRatio: 0, imageRatio: 0.5, seed: 5 };
    const imagesPlanned = planRequests({ ...DEFAULT_LOAD_OPTIONS, ...options }).filter((request) => request.image !== undefined).length;
    assert.ok(imagesPlanned > 0, 'the seed plans image requests');
    const summary = await runLoad(options);
    assert.deepEqual(
      { outcomes: summary.outcomes, errors: summary.errors, images: summary.images, imagesNotServed: summary.imagesNotServed },
      { outcomes: { ok: 12, aborted: 0, failed: 0, error: 0 }, errors: {}, images: 0, imagesNotServed: imagesPlanned },
    );
    assert.ok(
      formatSummary(summary).includes(`  images         0 received (the server serves no images API: ${imagesPlanned} image requests sent as chat)`),
      formatSummary(summary),
    );
  });
});
