import assert from 'node:assert/strict';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag } from '@opentelemetry/api';
import { createMetricsHandler } from '../../exporters/metrics-handler';
import { captureConsole } from '../support/console-capture';
import { gunzipSync } from 'node:zlib';
import { JOIN_WINDOW_BYTES, SharedRenderings, type RenderingReader, type SharedRendering } from '../../exporters/shared-rendering';

/** An exposition of `pieces` pieces of 64 KiB, each filled with its own letter. */
function* letters(pieces: number): Generator<string, void, undefined> {
  for (let i = 0; i < pieces; i++) yield String.fromCharCode(97 + (i % 26)).repeat(65_536);
}

/** Reads a rendering to its end, taking each chunk as it comes. */
function readAll(rendering: SharedRendering): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const reader: RenderingReader & { position: number } = {
      position: 0,
      onChunks: () => {
        while (reader.position < rendering.chunkCount) chunks.push(rendering.chunkAt(reader.position++));
        rendering.taken();
      },
      onEnd: (error) => {
        reader.onChunks();
        rendering.leave(reader);
        if (error === undefined) resolve(Buffer.concat(chunks));
        else reject(error instanceof Error ? error : new Error(String(error)));
      },
    };
    rendering.join(reader);
  });
}

describe('shared renderings', () => {
  it('a rendering keeps its first JOIN_WINDOW_BYTES for late readers, then lets go of what every reader took and takes no new one', async () => {
    const pieces = Math.ceil((2 * JOIN_WINDOW_BYTES) / 65_536);
    const expected = Buffer.from(Array.from(letters(pieces)).join(''));
    const renderings = new SharedRenderings(async () => letters(pieces));
    const first = renderings.rendering('text', false);
    const early = readAll(first);
    assert.equal(renderings.rendering('text', false), first, 'a scrape that arrives at once joins it');
    const joined = readAll(first);
    assert.ok((await early).equals(expected));
    assert.ok((await joined).equals(expected));
    assert.equal(renderings.started, 1);

    const second = renderings.rendering('text', false);
    assert.notEqual(second, first, 'a finished rendering is never reused');
    const reading = readAll(second);
    // Past the join window, chunks every reader took are let go of: the rendering takes no new reader.
    while (second.joinable) await new Promise((resolve) => setImmediate(resolve));
    assert.throws(() => second.chunkAt(0), /chunk 0 was let go of/);
    assert.notEqual(renderings.rendering('text', false), second, 'a later scrape starts a rendering of its own');
    assert.ok((await reading).equals(expected));
    assert.equal(renderings.started, 3);
  });

  it('bytes() keeps every chunk and gives every caller the same buffer; gzip is its own rendering', async () => {
    const pieces = Math.ceil((2 * JOIN_WINDOW_BYTES) / 65_536);
    const expected = Buffer.from(Array.from(letters(pieces)).join(''));
    const renderings = new SharedRenderings(async () => letters(pieces));
    const rendering = renderings.rendering('text', false);
    const [a, b] = await Promise.all([rendering.bytes(), rendering.bytes()]);
    assert.equal(a, b);
    assert.ok(a.equals(expected));
    const zipped = renderings.rendering('text', true);
    assert.ok(gunzipSync(await zipped.bytes()).equals(expected));
  });

  it('a rendering that fails tells its readers, and the next one starts afresh', async () => {
    let calls = 0;
    const renderings = new SharedRenderings(async () => {
      calls++;
      if (calls === 1) throw new Error('collection failed');
      return ['ok\n'];
    });
    await assert.rejects(renderings.rendering('text', false).bytes(), /collection failed/);
    assert.equal((await renderings.rendering('text', false).bytes()).toString(), 'ok\n');
  });

  it('the last reader to leave stops it: it produces nothing more', async () => {
    let produced = 0;
    const renderings = new SharedRenderings(async () =>
      (function* () {
        for (;;) {
          produced++;
          yield 'x'.repeat(65_536);
        }
      })(),
    );
    const rendering = renderings.rendering('text', false);
    const reader: RenderingReader = { position: 0, onChunks: () => undefined, onEnd: () => undefined };
    rendering.join(reader);
    while (produced < 3) await new Promise((resolve) => setImmediate(resolve));
    rendering.leave(reader);
    const stoppedAt = produced;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.ok(produced <= stoppedAt + 1, `stopped: ${produced} pieces, ${stoppedAt} when the reader left`);
    assert.equal(rendering.joinable, false);
  });
});

describe('a scrape whose collection fails', () => {
  beforeEach(() => diag.disable());

  it('is answered 500, and the failure is heard on the console with no diag logger installed', async () => {
    const handler = createMetricsHandler({ metricsText: () => Promise.reject(new Error('the collector broke')) });
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      let status = 0;
      const lines = await captureConsole(async () => {
        status = await new Promise<number>((resolve, reject) => {
          get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, { agent: false }, (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          }).on('error', reject);
        });
      });
      assert.equal(status, 500);
      // The message, then the error with its stack.
      assert.deepEqual(
        lines.map((line) => `${line.method}:${line.text.split('\n')[0]}`),
        ['error:omni-otel-metrics: metrics collection failed Error: the collector broke'],
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
