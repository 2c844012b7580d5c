import assert from 'node:assert/strict';
import * as http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { serializePrometheus } from '../../exporters/prometheus-serializer';
import type { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { populateEveryFamily } from '../support/populate';
import { EngineServer, fixtureText } from './support/engine-server';

function get(url: string, headers: Record<string, string>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(Buffer.concat(chunks)));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

describe('engine pull: one renderer', () => {
  let current: EngineServer | undefined;
  let dp: EngineServer | undefined;
  let handle: OmniMetricsHandle | undefined;

  afterEach(async () => {
    await handle?.shutdown();
    await Promise.all([current?.down(), dp?.down()]);
  });

  it("the pulled families printed in the store's blocks are the bytes the generic serializer gives the merged collection, streamed and gzipped alike", async () => {
    current = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    dp = await EngineServer.start(fixtureText('vllm-current-dp2.prom'));
    handle = await registerOmniMetrics({
      modelName: 'm',
      // Stage 1 replica 1 and stage 2 stay in-process: their store series print beside the pulled ones.
      stagePools: [1, 2, 2],
      logStats: true,
      prometheus: { port: 0 },
      exporters: ['prometheus'],
      logIntervalSeconds: 0,
      processMetrics: false,
      enginePull: {
        engines: [
          { stage: 0, replica: 0, url: current.url },
          { stage: 1, replica: 0, url: dp.url, engine: 0 },
          { stage: 2, replica: 1, url: dp.url, engine: 1 },
        ],
        // One pull serves every rendering below: the pulled values stand still.
        cacheMillis: 60_000,
        timeoutMillis: 5_000,
      },
      selfCheck: false,
    });
    populateEveryFamily(handle, 2);
    const reader = handle.prometheusReader as OmniPrometheusReader;
    const url = handle.prometheusServer?.url ?? '';
    const declared = handle.store.families.map(({ family, streamName }) => ({
      name: family.name,
      type: family.type,
      help: family.help,
      streamName,
      omitCreated: family.omitCreated,
    }));
    for (const [format, accept] of [
      ['text', 'text/plain'],
      ['openmetrics', 'application/openmetrics-text'],
    ] as const) {
      const served = await get(url, { Accept: accept });
      // The generic path: the store and the pull merged into OpenTelemetry data, printed point by point.
      const { resourceMetrics } = await reader.collect();
      const generic = serializePrometheus(resourceMetrics, declared, { format, createdSeries: true });
      assert.equal(served.toString('utf8'), generic, format);
      assert.match(generic, /vllm:num_requests_running\{model_name="[^"]+",replica="0",stage="1"\}/, 'a pulled series is there');
      const zipped = await get(url, { Accept: accept, 'Accept-Encoding': 'gzip' });
      assert.equal(gunzipSync(zipped).toString('utf8'), generic, `${format}, gzipped`);
    }
  });
});
