import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, negotiateFormat } from '../../exporters/content-negotiation';
import type { MetricsTextSource } from '../../exporters/metrics-handler';
import { startPrometheusServer, type PrometheusServer, type PrometheusServerOptions } from '../../exporters/prometheus-http';
import { expectPrinted } from '../support/console-capture';
import { activeResources, assertResourcesBackTo } from '../support/resources';

/** A test-only self-signed certificate for 127.0.0.1 (EC P-256, valid until 2126). */
const TLS = { keyFile: join(__dirname, 'fixtures', 'tls', 'key.pem'), certFile: join(__dirname, 'fixtures', 'tls', 'cert.pem') };
const BODY = '# HELP x X.\n# TYPE x gauge\nx 1.0\n'.repeat(200);

/** A source that counts its renderings and takes `delayMillis` for each. */
function countingSource(delayMillis = 0): MetricsTextSource & { renderings: number } {
  const source = {
    renderings: 0,
    metricsText: async () => {
      source.renderings++;
      await new Promise((resolve) => setTimeout(resolve, delayMillis));
      return BODY;
    },
  };
  return source;
}

interface Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function fetch(url: string, options: { method?: string; headers?: Record<string, string>; ca?: Buffer } = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { method: options.method ?? 'GET', headers: options.headers, agent: false, ca: options.ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw TCP connection that sends nothing; resolves with how long the server kept it open. */
function silentConnection(port: number): { socket: Socket; closed: Promise<number> } {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  socket.on('error', () => undefined);
  // Whatever the server answers is read and dropped: a paused socket holding unread bytes (Node's own
  // 408 when its headers timeout fires first) would never see the close that follows them.
  socket.resume();
  return { socket, closed };
}

/** A raw TCP connection that sends the start of a request and never the blank line that ends its headers. */
function partialHeaders(port: number): { socket: Socket; closed: Promise<number> } {
  const connection = silentConnection(port);
  connection.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  return connection;
}

function connected(sockets: ReadonlyArray<{ socket: Socket }>): Promise<unknown> {
  return Promise.all(sockets.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
}

/** Runs `scrape` `count` times one after another; how many got a 200. How fast they are is the bench's to say. */
async function scrapesInTurn(count: number, scrape: () => Promise<Response>): Promise<number> {
  let succeeded = 0;
  for (let i = 0; i < count; i++) {
    const response = await scrape().catch(() => undefined);
    if (response?.status === 200) succeeded++;
  }
  return succeeded;
}

async function withServer(source: MetricsTextSource, options: PrometheusServerOptions, run: (server: PrometheusServer) => Promise<void>): Promise<void> {
  const server = await startPrometheusServer(source, { host: '127.0.0.1', port: 0, ...options });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

describe('metrics server: what a Prometheus scrape config expects', () => {
  it('binds loopback unless told otherwise', async () => {
    const server = await startPrometheusServer(countingSource(), { port: 0 }, {});
    try {
      assert.equal(server.host, '127.0.0.1');
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    } finally {
      await server.close();
    }
  });

  it('bearer token: 401 with a challenge without it or with a wrong one, 200 with it', async () => {
    await withServer(countingSource(), { auth: { bearerToken: 's3cret' } }, async (server) => {
      const none = await fetch(server.url);
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="metrics"');
      assert.equal((await fetch(server.url, { headers: { Authorization: 'Bearer s3cre' } })).status, 401);
      assert.equal((await fetch(server.url, { headers: { Authorization: 'Basic czNjcmV0' } })).status, 401);
      const ok = await fetch(server.url, { headers: { Authorization: 'Bearer s3cret' } });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.toString(), BODY);
    });
  });

  it('basic auth: 200 with the user and password, 401 otherwise', async () => {
    await withServer(countingSource(), { auth: { basic: { username: 'prometheus', password: 'p:ss wörd' } } }, async (server) => {
      const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
      assert.equal((await fetch(server.url, { headers: basic('prometheus', 'p:ss wörd') })).status, 200);
      assert.equal((await fetch(server.url, { headers: basic('prometheus', 'p:ss word') })).status, 401);
      const none = await fetch(server.url);
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Basic realm="metrics", charset="UTF-8"');
    });
  });

  it('TLS: an https scrape trusting the self-signed certificate gets the exposition', async () => {
    await withServer(countingSource(), { tls: TLS }, async (server) => {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const response = await fetch(server.url, { ca: readFileSync(TLS.certFile) });
      assert.equal(response.status, 200);
      assert.equal(response.body.toString(), BODY);
      await assert.rejects(fetch(server.url), 'an untrusted certificate is refused by the client');
    });
  });

  it('a connection that never sends a byte is closed after the idle timeout', async function () {
    this.timeout(10_000);
    await withServer(countingSource(), { idleTimeoutMillis: 300 }, async (server) => {
      const { closed } = silentConnection(server.port);
      const heldMillis = await closed;
      // Closed at all is the await above (the test's timeout is far below a connection never closed); not before its timeout is this.
      assert.ok(heldMillis >= 250, `closed after ${heldMillis} ms`);
    });
  });

  it('close() does not wait for connections that never sent a whole request, and leaves none open', async () => {
    const before = await activeResources();
    const server = await startPrometheusServer(countingSource(), { host: '127.0.0.1', port: 0, idleTimeoutMillis: 60_000 });
    const silent = silentConnection(server.port);
    const partial = silentConnection(server.port);
    try {
      partial.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      await Promise.all([silent, partial].map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
      const inFlight = fetch(server.url);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // close() waiting for the 60 s idle timeout would run past this test's 20 s timeout.
      await server.close();
      assert.equal((await inFlight).body.toString(), BODY, 'a scrape being answered at close() gets its whole answer');
      await Promise.all([silent.closed, partial.closed]);
    } finally {
      silent.socket.destroy();
      partial.socket.destroy();
    }
    await assertResourcesBackTo(before, 'after close()');
  });

  it('at the cap, a scrape takes the slot of the oldest connection that sent no request', async function () {
    this.timeout(10_000);
    await expectPrinted(
      [
        'omni-otel-metrics: the /metrics server is at prometheus.maxConnections (3): closed the oldest connection that had not sent a request (from 127.0.0.1) to admit one from 127.0.0.1',
      ],
      () =>
        withServer(countingSource(), { maxConnections: 3 }, async (server) => {
          const held = [silentConnection(server.port), partialHeaders(server.port), silentConnection(server.port)];
          await connected(held);
          await new Promise((resolve) => setTimeout(resolve, 100));
          assert.equal((await fetch(server.url)).status, 200);
          await held[0].closed;
          assert.equal(held[1].socket.destroyed, false, 'the younger ones keep their slots');
          assert.equal(held[2].socket.destroyed, false);
          for (const { socket } of held) socket.destroy();
        }),
    );
  });

  it('at the cap with every connection being answered, a new connection is refused', async function () {
    this.timeout(10_000);
    await expectPrinted(
      [
        'omni-otel-metrics: the /metrics server is at prometheus.maxConnections (2), every connection being answered to a client that reads: refused a connection from 127.0.0.1',
      ],
      () =>
        withServer(countingSource(400), { maxConnections: 2 }, async (server) => {
          const answered = [fetch(server.url), fetch(server.url)];
          await new Promise((resolve) => setTimeout(resolve, 100));
          await assert.rejects(fetch(server.url), /ECONNRESET|socket hang up/);
          assert.deepEqual(
            (await Promise.all(answered)).map((response) => response.status),
            [200, 200],
          );
          assert.equal((await fetch(server.url)).status, 200, 'served again once the answers are written');
        }),
    );
  });

  it('a flood of maxConnections slow clients: 30 of 30 scrapes succeed at once, and the flood is closed at headersTimeoutMillis', async function () {
    this.timeout(10_000);
    await expectPrinted(
      [
        'omni-otel-metrics: the /metrics server is at prometheus.maxConnections (64): closed the oldest connection that had not sent a request (from 127.0.0.1) to admit one from 127.0.0.1',
      ],
      () =>
        withServer(countingSource(), { headersTimeoutMillis: 600 }, async (server) => {
          const flood = Array.from({ length: 64 }, () => partialHeaders(server.port));
          await connected(flood);
          assert.equal(await scrapesInTurn(30, () => fetch(server.url)), 30);
          // Every flood connection is closed: by a scrape taking its slot, or at headersTimeoutMillis (the
          // default idle timeout would outlast this test's timeout).
          await Promise.all(flood.map(({ closed }) => closed));
        }),
    );
  });

  it('headers trickling in are cut at headersTimeoutMillis, for a new connection and for a keep-alive one', async function () {
    this.timeout(10_000);
    await withServer(countingSource(), { headersTimeoutMillis: 300 }, async (server) => {
      const fresh = partialHeaders(server.port);
      const keptAlive = silentConnection(server.port);
      keptAlive.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      // Once the first answer is in, the second request's headers start and never finish.
      const answered = new Promise<number>((resolve) =>
        keptAlive.socket.on('data', function once(chunk: Buffer) {
          if (!chunk.toString().includes('x 1.0')) return;
          keptAlive.socket.off('data', once);
          keptAlive.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
          resolve(Date.now());
        }),
      );
      const freshHeld = await fresh.closed;
      assert.ok(freshHeld >= 250, `a new connection's headers were cut after ${freshHeld} ms`);
      const secondStarted = await answered;
      await keptAlive.closed;
      const secondHeld = Date.now() - secondStarted;
      assert.ok(secondHeld >= 250, `a keep-alive connection's second request was cut after ${secondHeld} ms`);
    });
  });

  it('TLS: a handshake that never finishes is closed at headersTimeoutMillis, and a flood of them leaves room for 30 of 30 scrapes', async function () {
    this.timeout(10_000);
    await expectPrinted(
      [
        'omni-otel-metrics: the /metrics server is at prometheus.maxConnections (64): closed the oldest connection that had not sent a request (from 127.0.0.1) to admit one from 127.0.0.1',
      ],
      () =>
        withServer(countingSource(), { tls: TLS, headersTimeoutMillis: 600 }, async (server) => {
          const ca = readFileSync(TLS.certFile);
          const flood = Array.from({ length: 64 }, () => silentConnection(server.port));
          await connected(flood);
          assert.equal(await scrapesInTurn(30, () => fetch(server.url, { ca })), 30);
          await Promise.all(flood.map(({ closed }) => closed));
          // A client that starts the handshake and stops after its first bytes is closed too (held until an
          // idle timeout instead, it would outlast this test's timeout).
          const stalled = tlsConnect({ port: server.port, host: '127.0.0.1', ca });
          stalled.on('error', () => undefined);
          const raw = silentConnection(server.port);
          raw.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
          await Promise.all([new Promise((resolve) => stalled.once('close', resolve)), raw.closed]);
        }),
    );
  });

  it('scrapes that overlap share one rendering', async () => {
    const source = countingSource(100);
    await withServer(source, {}, async (server) => {
      const responses = await Promise.all([fetch(server.url), fetch(server.url), fetch(server.url)]);
      assert.deepEqual(
        responses.map((r) => r.status),
        [200, 200, 200],
      );
      assert.equal(source.renderings, 1);
      await fetch(server.url);
      assert.equal(source.renderings, 2, 'a later scrape renders anew');
    });
  });

  it('gzip when the scraper accepts it (q above 0), streamed in chunks', async () => {
    await withServer(countingSource(), {}, async (server) => {
      const zipped = await fetch(server.url, { headers: { 'Accept-Encoding': 'gzip' } });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(zipped.headers['transfer-encoding'], 'chunked');
      assert.equal(zipped.headers['content-length'], undefined);
      assert.ok(zipped.body.length < Buffer.byteLength(BODY) / 5);
      assert.equal(gunzipSync(zipped.body).toString(), BODY);
      const refused = await fetch(server.url, { headers: { 'Accept-Encoding': 'gzip;q=0, identity' } });
      assert.equal(refused.headers['content-encoding'], undefined);
      assert.equal(refused.body.toString(), BODY);
    });
  });

  it('HEAD: the headers of a GET, Content-Length included, and no body', async () => {
    await withServer(countingSource(), {}, async (server) => {
      const head = await fetch(server.url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(Number(head.headers['content-length']), Buffer.byteLength(BODY));
      assert.equal(head.body.length, 0);
    });
  });

  it('rejects bad options before listening, naming the option', async () => {
    const source = countingSource();
    await assert.rejects(startPrometheusServer(source, { port: 0, maxConnections: 0 }), /prometheus\.maxConnections must be a positive integer; got 0/);
    await assert.rejects(startPrometheusServer(source, { port: 0, idleTimeoutMillis: 1.5 }), /prometheus\.idleTimeoutMillis/);
    await assert.rejects(
      startPrometheusServer(source, { port: 0, tls: { keyFile: '/nonexistent.pem', certFile: TLS.certFile } }),
      /prometheus\.tls\.keyFile: cannot read \/nonexistent\.pem/,
    );
    await assert.rejects(startPrometheusServer(source, { port: 0, auth: {} }), /prometheus\.auth needs bearerToken or basic/);
    await assert.rejects(
      startPrometheusServer(source, { port: 0, auth: { basic: { username: 'a:b', password: 'x' } } }),
      /username must be a non-empty string without ':'/,
    );
    await assert.rejects(startPrometheusServer(source, { port: 0, path: 'metrics' }), /prometheus\.path must start with '\/'/);
  });
});

describe('content negotiation', () => {
  it('OpenMetrics only when the scraper prefers it by q-value', () => {
    const prometheus =
      'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';
    assert.equal(negotiateFormat(prometheus), 'openmetrics');
    assert.equal(negotiateFormat('application/openmetrics-text'), 'openmetrics');
    assert.equal(negotiateFormat('text/plain;q=1, application/openmetrics-text;q=0.5'), 'text');
    assert.equal(negotiateFormat('application/openmetrics-text;q=0, text/plain'), 'text');
    assert.equal(negotiateFormat('application/openmetrics-text;q=bogus'), 'text');
    assert.equal(negotiateFormat('*/*'), 'text');
    assert.equal(negotiateFormat(undefined), 'text');
    assert.equal(negotiateFormat('application/json'), 'text', 'nothing we print is asked for: the default format');
  });

  it('gzip by Accept-Encoding, q-values honoured', () => {
    assert.equal(acceptsGzip('gzip, deflate, br'), true);
    assert.equal(acceptsGzip('*'), true);
    assert.equal(acceptsGzip('gzip;q=0'), false);
    assert.equal(acceptsGzip('*;q=0.5, gzip;q=0'), false);
    assert.equal(acceptsGzip('identity'), false);
    assert.equal(acceptsGzip(undefined), false);
  });
});
