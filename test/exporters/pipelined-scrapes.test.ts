import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { populatedPipeline } from '../../bench/scrape-setup';
import { resolvePrometheusServerSettings, serveMetrics } from '../../exporters/prometheus-http';
import type { OmniMetricsHandle } from '../../register';

interface Answer {
  readonly status: number;
  readonly body: Buffer;
}

/**
 * Sends `requests` on one connection at once (HTTP/1.1 pipelining, the last with `Connection:
 * close`), reads as fast as it can until the server closes, and returns the answers that arrived
 * whole, in order (chunked, or with a Content-Length; a HEAD's has no body).
 */
function pipelined(url: string, requests: ReadonlyArray<{ method: 'GET' | 'HEAD' }>): Promise<Answer[]> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const data: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => data.push(chunk));
    socket.on('close', () => resolve(answersIn(Buffer.concat(data), requests)));
    socket.on('error', reject);
    socket.write(
      requests
        .map(({ method }, i) => `${method} ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\n${i === requests.length - 1 ? 'Connection: close\r\n' : ''}\r\n`)
        .join(''),
    );
  });
}

/** The whole answers at the start of `received`, one per request. */
function answersIn(received: Buffer, requests: ReadonlyArray<{ method: 'GET' | 'HEAD' }>): Answer[] {
  const answers: Answer[] = [];
  let at = 0;
  for (const { method } of requests) {
    const headEnd = received.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const head = received.subarray(at, headEnd).toString('latin1');
    const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]);
    at = headEnd + 4;
    const chunks: Buffer[] = [];
    if (method === 'GET' && /transfer-encoding: chunked/i.test(head)) {
      for (;;) {
        const lineEnd = received.indexOf('\r\n', at);
        if (lineEnd < 0) return answers;
        const size = parseInt(received.subarray(at, lineEnd).toString('latin1'), 16);
        if (received.length < lineEnd + 2 + size + 2) return answers;
        chunks.push(received.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (method === 'GET') {
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < at + length) return answers;
      chunks.push(received.subarray(at, at + length));
      at += length;
    }
    answers.push({ status, body: Buffer.concat(chunks) });
  }
  return answers;
}

describe('pipelined requests on one connection: each is a reader only once it owns the socket', function () {
  this.timeout(180_000);
  let handle: OmniMetricsHandle;
  let url: string;
  let expected: Buffer;

  before(async () => {
    ({ handle } = await populatedPipeline(128, { prometheus: { port: 0 }, exporters: ['prometheus'] }));
    url = handle.prometheusServer?.url ?? '';
    // Nothing records meanwhile: every whole answer is this very exposition.
    expected = (await handle.prometheusReader?.metricsBytes()) ?? Buffer.alloc(0);
  });

  after(() => handle.shutdown());

  it('3 × 128 replicas (an exposition past 16 MiB): three pipelined GETs read as fast as the client can are all answered whole', async () => {
    assert.ok(expected.length > 16 * 2 ** 20, `an exposition past MAX_READER_LAG_BYTES (${expected.length} bytes)`);
    const answers = await pipelined(url, [{ method: 'GET' }, { method: 'GET' }, { method: 'GET' }]);
    assert.deepEqual(
      answers.map(({ status, body }) => `${status} ${body.equals(expected) ? 'whole' : `${body.length} bytes`}`),
      ['200 whole', '200 whole', '200 whole'],
    );
  });

  it('a HEAD pipelined between GETs is answered in its turn, with no body', async () => {
    const answers = await pipelined(url, [{ method: 'GET' }, { method: 'HEAD' }, { method: 'GET' }]);
    assert.deepEqual(
      answers.map(({ status, body }) => `${status} ${body.equals(expected) ? 'whole' : `${body.length} bytes`}`),
      ['200 whole', '200 0 bytes', '200 whole'],
    );
  });

  it('a client that goes away with requests still queued behind its first leaves no response for close() to wait for', async function () {
    // Were the queued responses still counted as being written, close() would spare the silent client below and wait for the grace, or for
    // the client's headers timeout: a minute each, past this test's timeout.
    this.timeout(5000);
    const server = await serveMetrics(
      { metricsText: async () => `# TYPE x gauge\n${'x 1\n'.repeat(2_000_000)}` },
      { ...resolvePrometheusServerSettings({ port: 0, headersTimeoutMillis: 60_000 }, {}), shutdownGraceMillis: 60_000 },
    );
    const { hostname, port, pathname } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => {
      socket.write(`GET ${pathname} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(3));
      socket.once('data', () => resolve());
    });
    socket.destroy();
    // A client that connected and sent nothing: close() closes it at once when no response is being written.
    const silent = connect(Number(port), hostname);
    await new Promise((resolve) => silent.once('connect', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server.close();
    silent.destroy();
  });
});
