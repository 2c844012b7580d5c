import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import { gunzipSync } from 'node:zlib';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import type { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { renderStore } from '../support/exposition';
import { OPENMETRICS_CONTENT_TYPE } from '../../exporters/exposition/exposition-text';
import { populateEveryFamily } from '../support/populate';

/** A pipeline large enough that a scrape is rendered in many slices and sent in many chunks (about 2 MB of text). */
async function largePipeline(): Promise<OmniMetricsHandle> {
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: [16, 16, 16],
    logStats: true,
    showHiddenMetrics: true,
    prometheus: { port: 0 },
    exporters: ['prometheus'],
    logIntervalSeconds: 0,
    processMetrics: false,
    selfCheck: false,
  });
  populateEveryFamily(handle, 3);
  for (const [, engine] of handle.stageReplicaMap.entries())
    handle.store.bind('upstream.timeToFirstTokenSeconds', ['m', engine.stage, engine.replica]).record(0.25);
  return handle;
}

interface Scrape {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly chunks: number;
}

function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks), chunks: chunks.length }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

function renderingsOf(handle: OmniMetricsHandle): number {
  return (handle.prometheusReader as OmniPrometheusReader).sharedRenderings.started;
}

describe('streamed scrapes', () => {
  let handle: OmniMetricsHandle;
  let url: string;

  before(async () => {
    handle = await largePipeline();
    url = handle.prometheusServer?.url ?? '';
  });

  after(async () => {
    await handle.shutdown();
  });

  it('stream the very bytes of the whole rendering, in both formats, with and without gzip', async () => {
    for (const [accept, format] of [
      ['text/plain', 'text'],
      ['application/openmetrics-text;version=1.0.0', 'openmetrics'],
    ] as const) {
      // Values stand still between the two renderings: nothing records meanwhile.
      const expected = renderStore(handle.store, { format, createdSeries: true });
      assert.ok(expected.length > 1_000_000, `a large exposition (${expected.length} bytes)`);
      const plain = await scrape(url, { Accept: accept });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['transfer-encoding'], 'chunked');
      assert.ok(plain.chunks > 1, 'sent as it was rendered, in several chunks');
      assert.ok(plain.body.equals(expected), `${format}: identical bytes`);
      const zipped = await scrape(url, { Accept: accept, 'Accept-Encoding': 'gzip' });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.ok(gunzipSync(zipped.body).equals(expected), `${format} gzipped: identical bytes once unzipped`);
      if (format === 'openmetrics') assert.equal(plain.headers['content-type'], OPENMETRICS_CONTENT_TYPE);
    }
  });

  it('a reader that joins a rendering under way still receives it from the first byte', async () => {
    const reader = handle.prometheusReader as OmniPrometheusReader;
    const before = renderingsOf(handle);
    const early = scrape(url);
    await new Promise((resolve) => setImmediate(resolve));
    const late = await reader.metricsBytes('text');
    assert.equal(renderingsOf(handle) - before, 1);
    assert.ok((await early).body.equals(late));
  });

  it('a slow reader gets everything (backpressure), and a client that leaves mid-scrape stops the rendering', async () => {
    const expected = renderStore(handle.store, { format: 'text', createdSeries: true });
    const slow = await new Promise<Buffer>((resolve, reject) => {
      http
        .get(url, { agent: false }, (response) => {
          const chunks: Buffer[] = [];
          response.pause();
          // Reads a chunk now and then: the server's writes fill the socket and wait for 'drain'.
          const timer = setInterval(() => {
            let chunk: Buffer | null;
            while ((chunk = response.read() as Buffer | null) !== null) chunks.push(chunk);
          }, 5);
          response.on('end', () => {
            clearInterval(timer);
            resolve(Buffer.concat(chunks));
          });
          response.on('error', reject);
        })
        .on('error', reject);
    });
    assert.ok(slow.equals(expected));

    const renderingsBefore = renderingsOf(handle);
    const handlesBefore = process.getActiveResourcesInfo().length;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(url, { agent: false }, (response) => {
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(renderingsOf(handle) - renderingsBefore, 1);
    assert.ok(process.getActiveResourcesInfo().length <= handlesBefore, 'no socket, timer or immediate left behind');
    // The abandoned rendering is no longer joinable: the next scrape renders anew and is whole.
    const next = await scrape(url);
    assert.equal(renderingsOf(handle) - renderingsBefore, 2);
    assert.ok(next.body.equals(renderStore(handle.store, { format: 'text', createdSeries: true })));
  });

  it('metricsText() decodes the exposition as it is rendered, half a megabyte at a time: no step copies or decodes it whole', async () => {
    const expected = renderStore(handle.store, { format: 'text', createdSeries: true }).toString('utf8');
    const largest = { copied: 0, decoded: 0 };
    const buffers = Buffer as { concat: typeof Buffer.concat };
    const concat = Buffer.concat;
    const toString = Buffer.prototype.toString;
    buffers.concat = (list, totalLength) => {
      const joined = concat(list, totalLength);
      largest.copied = Math.max(largest.copied, joined.length);
      return joined;
    };
    Buffer.prototype.toString = function (this: Buffer, ...args: Parameters<Buffer['toString']>): string {
      largest.decoded = Math.max(largest.decoded, this.length);
      return toString.apply(this, args);
    };
    let text: string;
    try {
      text = await (handle.prometheusReader as OmniPrometheusReader).metricsText('text');
    } finally {
      buffers.concat = concat;
      Buffer.prototype.toString = toString;
    }
    assert.ok(expected.length > 1_000_000);
    assert.equal(text, expected);
    // Decoded by a StringDecoder, half a megabyte at a time (of the 1.8 MB exposition): never the whole.
    assert.equal(largest.decoded, 0);
    assert.ok(largest.copied > 0 && largest.copied < 512 * 1024 + 32 * 1024, `gathered ${largest.copied} bytes at most`);
  });

  it('HEAD waits for the rendering and sends its length, no body', async () => {
    const expected = renderStore(handle.store, { format: 'text', createdSeries: true });
    const head = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http
        .request(url, { method: 'HEAD', agent: false }, (response) => {
          response.resume();
          response.on('end', () => resolve(response));
        })
        .on('error', reject)
        .end();
    });
    assert.equal(head.statusCode, 200);
    assert.equal(Number(head.headers['content-length']), expected.length);
  });

  it('an absolute-form request target is served like its path', async () => {
    const { port } = new URL(url);
    const response = await new Promise<number>((resolve, reject) => {
      http
        .request({ host: '127.0.0.1', port, path: `http://127.0.0.1:${port}/metrics`, agent: false }, (res) => {
          // Read to the end: a rendering left running would be joined by the next test's scrapes.
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject)
        .end();
    });
    assert.equal(response, 200);
  });

  // Last: it adds an instrument of the application's, which the expositions after it would carry.
  it('ten concurrent scrapes of one format and encoding are served by one rendering', async () => {
    // The rendering waits, in the SDK's collection, for an observable instrument of the application's whose callback
    // returns only once all ten requests have reached the handler: each of them finds the rendering under way.
    let arrived = 0;
    let release: () => void = () => undefined;
    let gate = Promise.resolve();
    const meter = (handle.meterProvider as MeterProvider).getMeter('gate');
    meter.createObservableGauge('gate_open').addCallback(async (result) => {
      await gate;
      result.observe(1);
    });
    const handler = handle.metricsHandler();
    const server = http.createServer((request, response) => {
      arrived++;
      handler(request, response);
      if (arrived % 10 === 0) release();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gated = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    const closeGate = (): void => {
      gate = new Promise((resolve) => (release = resolve));
    };
    try {
      const before = renderingsOf(handle);
      closeGate();
      const responses = await Promise.all(Array.from({ length: 10 }, () => scrape(gated)));
      assert.equal(renderingsOf(handle) - before, 1);
      const first = responses[0]?.body ?? Buffer.alloc(0);
      assert.ok(first.length > 1_000_000);
      for (const response of responses) assert.ok(response.body.equals(first), 'every scraper receives the whole exposition');
      closeGate();
      const zipped = await Promise.all(Array.from({ length: 10 }, () => scrape(gated, { 'Accept-Encoding': 'gzip' })));
      assert.equal(renderingsOf(handle) - before, 2, 'the gzipped ones share one more rendering');
      for (const response of zipped) assert.ok(gunzipSync(response.body).equals(first));
      gate = Promise.resolve();
      await scrape(gated);
      assert.equal(renderingsOf(handle) - before, 3, 'a scrape after they finished renders anew: no reuse window');
    } finally {
      gate = Promise.resolve();
      release();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
