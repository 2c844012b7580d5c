import assert from 'node:assert/strict';
import * as http from 'node:http';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { populatedPipeline } from '../../bench/scrape-setup';
import { StalledReaders } from '../../bench/stalled-readers';
import { STALLED_READER_MILLIS } from '../../exporters/connection-slots';
import { resolvePrometheusServerSettings, serveMetrics, startPrometheusServer } from '../../exporters/prometheus-http';
import { heldBytes, MAX_HELD_BYTES } from '../../exporters/rendering-memory';

/** A GET on a fresh connection: its status and body, or undefined when the connection was refused or cut. */
function scrape(url: string): Promise<{ status: number; body: Buffer } | undefined> {
  return new Promise((resolve) => {
    http
      .get(url, { agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', () => resolve(undefined));
      })
      .on('error', () => resolve(undefined));
  });
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** Diag warnings from now on, and a way to wait for one. */
function listenToWarnings(): { warnings: string[]; arrived: (pattern: RegExp) => Promise<string>; stop: () => void } {
  const warnings: string[] = [];
  const none = (): void => undefined;
  diag.setLogger({ error: none, warn: (message: string) => warnings.push(message), info: none, debug: none, verbose: none }, DiagLogLevel.WARN);
  return {
    warnings,
    arrived: async (pattern) => {
      for (;;) {
        const found = warnings.find((warning) => pattern.test(warning));
        if (found !== undefined) return found;
        await sleep(20);
      }
    },
    stop: () => diag.disable(),
  };
}

/** Resolves once what renderings hold for readers has stood still for `STALLED_READER_MILLIS` and a little more: no reader takes anything. */
async function stalled(): Promise<void> {
  let held = heldBytes();
  let since = performance.now();
  while (performance.now() - since < STALLED_READER_MILLIS + 200) {
    await sleep(50);
    if (heldBytes() !== held) {
      held = heldBytes();
      since = performance.now();
    }
  }
}

describe('the /metrics server under readers that never read', function () {
  this.timeout(120_000);

  for (const replicas of [16, 64]) {
    it(`3 × ${replicas} replicas: 64 readers that send GET and never read lock no scraper out (10 of 10 whole scrapes), and what renderings hold for readers stays within MAX_HELD_BYTES`, async () => {
      const { handle } = await populatedPipeline(replicas, { prometheus: { port: 0 }, exporters: ['prometheus'] });
      const url = handle.prometheusServer?.url ?? '';
      const quiet = listenToWarnings();
      const readers = new StalledReaders(url, { count: 64, staggerMillis: 20 });
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, heldBytes())), 1);
      try {
        // Nothing records meanwhile: every whole scrape is this very exposition.
        const expected = await handle.prometheusReader?.metricsBytes();
        assert.ok(expected !== undefined && expected.length > replicas * 200_000, `a large exposition (${expected?.length} bytes)`);
        await readers.open();
        // The kernel takes in a few megabytes for each reader first; then every slot is held by a
        // reader that takes nothing, and past STALLED_READER_MILLIS a scraper may take the slot of one.
        await sleep(1000);
        await stalled();
        let served = 0;
        for (let i = 0; i < 10; i++) {
          const result = await scrape(url);
          if (result?.status === 200 && result.body.equals(expected)) served++;
        }
        assert.equal(served, 10);
        assert.ok(peak > 0, 'the stalled readers were being answered');
        assert.ok(peak <= MAX_HELD_BYTES, `renderings held at most ${peak} bytes for readers (bound ${MAX_HELD_BYTES})`);
      } finally {
        clearInterval(sampler);
        await readers.close();
        quiet.stop();
        await handle.shutdown();
      }
    });
  }

  it('a response not written within writeTimeoutMillis has its connection closed, and the operator is told', async () => {
    const quiet = listenToWarnings();
    const server = await startPrometheusServer(
      { metricsText: async () => `# TYPE x gauge\n${'x 1\n'.repeat(2_000_000)}` },
      { port: 0, writeTimeoutMillis: 300 },
    );
    const readers = new StalledReaders(server.url, { count: 1 });
    try {
      await readers.open();
      assert.equal(
        await quiet.arrived(/writeTimeoutMillis/),
        'omni-otel-metrics: closed a /metrics connection (from 127.0.0.1) whose response was not written within prometheus.writeTimeoutMillis (300 ms)',
      );
    } finally {
      await readers.close();
      quiet.stop();
      await server.close();
    }
  });

  it('close() closes the connection of a reader that never reads once its grace is over (5 s, or writeTimeoutMillis when shorter)', async () => {
    assert.equal(resolvePrometheusServerSettings({}, {}).shutdownGraceMillis, 5000);
    assert.equal(resolvePrometheusServerSettings({ writeTimeoutMillis: 300 }, {}).shutdownGraceMillis, 300);
    assert.equal(resolvePrometheusServerSettings({}, {}).writeTimeoutMillis, 60_000);
    assert.throws(
      () => resolvePrometheusServerSettings({ writeTimeoutMillis: 0 }, {}),
      /^RangeError: prometheus\.writeTimeoutMillis must be a positive integer; got 0$/,
    );
    let requested!: () => void;
    const request = new Promise<void>((resolve) => (requested = resolve));
    const source = {
      metricsText: async () => {
        requested();
        return `# TYPE x gauge\n${'x 1\n'.repeat(2_000_000)}`;
      },
    };
    // The write deadline stays at its minute: only the grace can end this.
    const server = await serveMetrics(source, { ...resolvePrometheusServerSettings({ port: 0 }, {}), shutdownGraceMillis: 200 });
    const readers = new StalledReaders(server.url, { count: 1 });
    try {
      await readers.open();
      await request;
      // The reader's socket fills and the response waits for a drain that never comes.
      await sleep(200);
      await server.close();
    } finally {
      await readers.close();
    }
  });
});
