/**
 * Slow-client flood against the built-in /metrics server: `maxConnections` sockets that send part
 * of their request headers (or, with TLS, never finish the handshake), then legitimate scrapes on
 * fresh connections. Prints how many scrapes succeeded while the flood held on, and how long the
 * server kept the flood's sockets.
 *
 * `reconnect`: plain HTTP, and each flood socket the server closes is replaced at once (reported:
 * replacements made).
 *
 *   npx tsx bench/slow-client-flood.ts [http|tls|reconnect] [headersTimeoutMillis] [scrapes]
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPrometheusServer } from '../exporters/prometheus-http';

const mode = process.argv[2] === 'tls' || process.argv[2] === 'reconnect' ? process.argv[2] : 'http';
const headersTimeoutMillis = Number(process.argv[3] ?? 2000);
const scrapes = Number(process.argv[4] ?? 30);
const FLOOD = 64;
const TLS_FILES = {
  keyFile: join(__dirname, '..', 'test', 'exporters', 'fixtures', 'tls', 'key.pem'),
  certFile: join(__dirname, '..', 'test', 'exporters', 'fixtures', 'tls', 'cert.pem'),
};

function scrape(url: string, ca: Buffer | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { agent: false, ca, timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function main(): Promise<void> {
  const server = await startPrometheusServer(
    { metricsText: async () => '# TYPE x gauge\nx 1\n' },
    { host: '127.0.0.1', port: 0, headersTimeoutMillis, ...(mode === 'tls' ? { tls: TLS_FILES } : {}) },
  );
  const ca = mode === 'tls' ? readFileSync(TLS_FILES.certFile) : undefined;
  const started = Date.now();
  let closedCount = 0;
  let replacements = 0;
  let flooding = true;
  const open = (): Promise<number> => {
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    // Read what the server sends (a 408), or the end of the stream would never be seen.
    socket.resume();
    // Plain HTTP: a request line and one header, never the blank line. TLS: nothing at all, so the
    // handshake never completes.
    if (mode !== 'tls') socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    return new Promise<number>((resolve) =>
      socket.on('close', () => {
        closedCount++;
        if (mode === 'reconnect' && flooding) {
          replacements++;
          void open();
        }
        resolve(Date.now() - started);
      }),
    );
  };
  const held = Array.from({ length: FLOOD }, open);
  await new Promise((resolve) => setTimeout(resolve, 200));
  // One scrape every 100 ms, each on a fresh connection with a 1 s budget.
  const outcomes = await Promise.all(
    Array.from({ length: scrapes }, (_, i) => new Promise((resolve) => setTimeout(resolve, i * 100)).then(() => scrape(server.url, ca))),
  );
  const succeeded = outcomes.filter(Boolean).length;
  const scrapeMillis = Date.now() - started;
  flooding = false;
  const closedAt = await Promise.race([Promise.all(held), new Promise<undefined>((resolve) => setTimeout(resolve, 150_000, undefined))]);
  console.log(
    JSON.stringify({
      mode,
      headersTimeoutMillis,
      flood: FLOOD,
      scrapes,
      succeeded,
      scrapesDoneAfterMillis: scrapeMillis,
      ...(mode === 'reconnect' ? { replacements } : {}),
      floodHeldMillis: closedAt ? { min: Math.min(...closedAt), max: Math.max(...closedAt) } : `over 150 s (${closedCount} of ${FLOOD} closed)`,
    }),
  );
  await server.close();
}

void main();
