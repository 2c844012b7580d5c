import assert from 'node:assert/strict';
import { Agent, get, request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { populatedPipeline } from '../../bench/scrape-setup';
import { heldBytes, MAX_HELD_BYTES } from '../../exporters/rendering-memory';
import type { OmniMetricsHandle } from '../../register';

/** The formats a scraper may ask for: the 0.0.4 text, OpenMetrics, the protobuf exposition. */
const ACCEPT = [
  'text/plain;version=0.0.4',
  'application/openmetrics-text;version=1.0.0',
  'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited',
] as const;

/** One HEAD over `agent`: its status and Content-Length. */
function head(url: string, agent: Agent, gzip = false, accept: string = ACCEPT[0]): Promise<{ status: number; length: number }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: 'HEAD', agent, headers: { accept, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, length: Number(response.headers['content-length']) }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** One GET's body, as sent on the wire. */
function body(url: string, gzip = false, accept: string = ACCEPT[0]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { accept, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks)));
    }).on('error', reject);
  });
}

describe('HEAD /metrics: the Content-Length of what a GET sends, within the memory budget of a GET', function () {
  this.timeout(120_000);
  let handle: OmniMetricsHandle;
  let url: string;

  before(async () => {
    ({ handle } = await populatedPipeline(64, { prometheus: { port: 0 }, exporters: ['prometheus'] }));
    url = handle.prometheusServer?.url ?? '';
  });

  after(() => handle.shutdown());

  it('answers the length of the exposition a GET gets, plain and gzip, with no body', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const plain = await body(url);
      assert.ok(plain.length > 10_000_000, `a large exposition (${plain.length} bytes)`);
      assert.deepEqual(await head(url, agent), { status: 200, length: plain.length });
      const zipped = await head(url, agent, true);
      assert.equal(zipped.status, 200);
      // gzip output depends on where chunks fall; the length is of a whole gzip stream of the same text.
      const sent = await body(url, true);
      assert.equal(gunzipSync(sent).length, plain.length);
      assert.ok(Math.abs(zipped.length - sent.length) < sent.length * 0.01, `${zipped.length} bytes announced, ${sent.length} sent`);
    } finally {
      agent.destroy();
    }
  });

  it('64 connections sending HEAD after HEAD, in every format, are readers the memory budget counts: never more than MAX_HELD_BYTES held for them', async () => {
    const lengths = await Promise.all(ACCEPT.map(async (accept) => (await body(url, false, accept)).length));
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, heldBytes())), 1);
    try {
      const answered = await Promise.all(
        Array.from({ length: 64 }, async (_, lane) => {
          const seen: string[] = [];
          for (let i = 0; i < 4; i++) {
            const format = (lane + i) % ACCEPT.length;
            const { status, length } = await head(url, agent, false, ACCEPT[format]);
            seen.push(`${status} ${length === lengths[format] ? 'the GET length' : length}`);
          }
          return seen;
        }),
      );
      assert.deepEqual([...new Set(answered.flat())], ['200 the GET length']);
    } finally {
      clearInterval(sampler);
      agent.destroy();
    }
    // A HEAD holds no whole exposition of its own: what its rendering keeps is in the budget, as a GET's is.
    assert.ok(peak > 0, 'the HEADs were counted while they were answered');
    assert.ok(peak <= MAX_HELD_BYTES, `renderings held at most ${peak} bytes for readers (bound ${MAX_HELD_BYTES})`);
  });
});
