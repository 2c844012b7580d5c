import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, negotiateFormat } from '../../exporters/content-negotiation';
import type { MetricsTextSource } from '../../exporters/metrics-handler';
import { startPrometheusServer, type PrometheusServer, type PrometheusServerOptions } from '../../exporters/prometheus-http';
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
  return { socket, closed };
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
      assert.ok(heldMillis >= 250 && heldMillis < 5000, `closed after ${heldMillis} ms`);
    });
  });

  it('close() does not wait for connections that never sent a whole request, and leaves none open', async () => {
    const before = await activeResources();
    const server = await startPrometheusServer(countingSource(), { host: '127.0.0.1', port: 0, idleTimeoutMillis: 60_000 });
    const silent = silentConnection(server.port);
    const partial = silentConnection(server.port);
    let deadline: NodeJS.Timeout | undefined;
    try {
      partial.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      await Promise.all([silent, partial].map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
      const inFlight = fetch(server.url);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const closed = await Promise.race([server.close().then(() => true), new Promise<boolean>((resolve) => (deadline = setTimeout(resolve, 2000, false)))]);
      assert.ok(closed, 'close() resolved within 2 s, not after the 60 s idle timeout');
      assert.equal((await inFlight).body.toString(), BODY, 'a scrape being answered at close() gets its whole answer');
      await Promise.all([silent.closed, partial.closed]);
    } finally {
      clearTimeout(deadline);
      silent.socket.destroy();
      partial.socket.destroy();
    }
    await assertResourcesBackTo(before, 'after close()');
  });

  it('connections beyond the cap are refused; the server serves again once they go', async function () {
    this.timeout(10_000);
    await withServer(countingSource(), { maxConnections: 3 }, async (server) => {
      const held = [silentConnection(server.port), silentConnection(server.port), silentConnection(server.port)];
      await Promise.all(held.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const extra = silentConnection(server.port);
      const refusedAfter = await extra.closed;
      assert.ok(refusedAfter < 2000, `the fourth connection was closed by the server (${refusedAfter} ms)`);
      for (const { socket } of held) socket.destroy();
      await Promise.all(held.map(({ closed }) => closed));
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await fetch(server.url)).status, 200);
    });
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
    await assert.rejects(startPrometheusServer(source, { port: 0, maxConnections: 0 }), /prometheus\.maxConnections must be a positive integer, got 0/);
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
