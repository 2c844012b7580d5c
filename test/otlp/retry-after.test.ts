import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import type { ExportSettings } from '../../exporters/otlp/export-settings';
import { createPushReaders } from '../../exporters/otlp/push-readers';
import { MAX_RETRY_AFTER_MILLIS, retryAfterMillis } from '../../exporters/otlp/retry-after';
import type { TemporalityPreference } from '../../exporters/otlp/types';

/** One request the collector received: when, and the `jobs` counter's value in it. */
interface Received {
  readonly atMillis: number;
  readonly jobs: number | undefined;
}

/**
 * An OTLP/HTTP JSON collector on 127.0.0.1 answering its first `throttled` requests with 429 and
 * `Retry-After: <seconds>`, the others with 200.
 */
async function startThrottlingCollector(throttled: number, retryAfterSeconds: number): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ atMillis: Date.now(), jobs: jobsValue(Buffer.concat(chunks).toString()) });
      if (received.length <= throttled) response.writeHead(429, { 'Retry-After': String(retryAfterSeconds) }).end();
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`, received, server };
}

/** The `jobs` counter's value in an OTLP JSON request body. */
function jobsValue(body: string): number | undefined {
  const request = JSON.parse(body) as {
    resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string; sum?: { dataPoints: Array<{ asDouble?: number }> } }> }> }>;
  };
  for (const resource of request.resourceMetrics) {
    for (const scope of resource.scopeMetrics) {
      for (const metric of scope.metrics) if (metric.name === 'jobs') return metric.sum?.dataPoints[0]?.asDouble;
    }
  }
  return undefined;
}

function settings(url: string, temporality: TemporalityPreference): ExportSettings {
  return {
    exporters: new Set(['otlp']),
    exportersSource: 'option',
    // Timeouts shorter than the Retry-After: the exporter's own retry within one export gives up.
    otlp: { protocol: 'http/json', url, timeoutMillis: 100, temporality },
    exportIntervalMillis: 100,
    exportTimeoutMillis: 100,
  };
}

function closeCollector(server: Server): void {
  server.closeAllConnections();
  server.close();
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

/** Runs `work` with diag warnings (and errors) captured. */
async function withDiag<T>(work: () => Promise<T>): Promise<{ warnings: string[]; errors: string[] }> {
  const warnings: string[] = [];
  const errors: string[] = [];
  const ignore = () => undefined;
  diag.setLogger(
    {
      error: (...args: unknown[]) => errors.push(args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' ')),
      warn: (message: string) => warnings.push(message),
      info: ignore,
      debug: ignore,
      verbose: ignore,
    },
    DiagLogLevel.WARN,
  );
  try {
    await work();
    return { warnings, errors };
  } finally {
    diag.disable();
  }
}

describe('OTLP: a collector that answers 429 with Retry-After', function () {
  this.timeout(10_000);

  it('is sent nothing until the time it asked for, then the cumulative totals; one warning', async () => {
    const collector = await startThrottlingCollector(1, 1);
    const provider = new MeterProvider({ readers: createPushReaders(settings(collector.url, 'cumulative')) });
    const jobs = provider.getMeter('t').createCounter('jobs');
    try {
      const { warnings, errors } = await withDiag(async () => {
        jobs.add(1);
        while (collector.received.length === 0) await sleep(10);
        jobs.add(2);
        await sleep(1300);
      });
      const [refused, next] = collector.received;
      assert.equal(refused.jobs, 1);
      const gap = next.atMillis - refused.atMillis;
      // Not before the Retry-After; not much after it either, or it would not be here after the 1.3 s wait.
      assert.ok(gap >= 990, `the next export came ${gap} ms after the 429 with Retry-After: 1`);
      assert.equal(next.jobs, 3, 'nothing lost: the totals went with the next export');
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(
        warnings[0],
        /^omni-otel-metrics: the OTLP collector asked, with Retry-After, not to be sent metrics before \S+Z: exports until then are skipped \(nothing is lost: the next export carries the totals\)$/,
      );
      // The refused export is reported (so may be an export slowed past its 100 ms by a busy machine);
      // the skipped ones are not failures.
      assert.ok(
        errors.some((error) => /Export failed with retryable status/.test(error)),
        errors.join('\n'),
      );
      assert.deepEqual(
        errors.filter((error) => !/Export failed with retryable status|timed? ?out/i.test(error)),
        [],
      );
    } finally {
      await provider.shutdown();
      closeCollector(collector.server);
    }
  });

  it('with delta temporality the warning says the skipped increments are dropped', async () => {
    const collector = await startThrottlingCollector(1, 1);
    const provider = new MeterProvider({ readers: createPushReaders(settings(collector.url, 'delta')) });
    const jobs = provider.getMeter('t').createCounter('jobs');
    try {
      const { warnings } = await withDiag(async () => {
        jobs.add(1);
        while (collector.received.length === 0) await sleep(10);
        // Exports with no change since the last one are not even attempted: give the next ones some.
        jobs.add(2);
        await sleep(150);
        jobs.add(4);
        await sleep(150);
      });
      assert.equal(collector.received.length, 1);
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0], /exports until then are skipped \(with delta temporality the increments of skipped exports are dropped\)$/);
    } finally {
      await provider.shutdown();
      closeCollector(collector.server);
    }
  });

  it('shutdown still makes its last export, whatever the collector asked', async () => {
    const collector = await startThrottlingCollector(1, 30);
    const provider = new MeterProvider({ readers: createPushReaders(settings(collector.url, 'cumulative')) });
    const jobs = provider.getMeter('t').createCounter('jobs');
    try {
      jobs.add(1);
      while (collector.received.length === 0) await sleep(10);
      await withDiag(() => sleep(250));
      assert.equal(collector.received.length, 1, 'the 30 s pause holds between intervals');
      jobs.add(4);
      await provider.shutdown();
      assert.equal(collector.received.length, 2);
      assert.equal(collector.received[1].jobs, 5);
    } finally {
      await provider.shutdown().catch(() => undefined);
      closeCollector(collector.server);
    }
  });
});

describe('retryAfterMillis', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('reads seconds and HTTP dates on 429 and 503 only, bounded', () => {
    assert.equal(retryAfterMillis(429, '30', now), 30_000);
    assert.equal(retryAfterMillis(503, ' 2 ', now), 2000);
    assert.equal(retryAfterMillis(429, 'Tue, 01 Jan 2030 00:00:45 GMT', now), 45_000);
    assert.equal(retryAfterMillis(429, ['5', '7'], now), 5000);
    assert.equal(retryAfterMillis(429, '86400', now), MAX_RETRY_AFTER_MILLIS);
    assert.equal(retryAfterMillis(500, '30', now), undefined);
    assert.equal(retryAfterMillis(429, undefined, now), undefined);
    assert.equal(retryAfterMillis(429, '0', now), undefined);
    assert.equal(retryAfterMillis(429, '-5', now), undefined);
    assert.equal(retryAfterMillis(429, 'Mon, 31 Dec 2029 23:59:00 GMT', now), undefined, 'a date in the past');
    assert.equal(retryAfterMillis(429, 'soon', now), undefined);
  });

  it('any header value gives undefined or a wait from 1 ms to the bound', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(429, 503),
        fc.oneof(
          fc.string(),
          fc.nat().map(String),
          fc.date().map((date) => date.toUTCString()),
        ),
        (status, header) => {
          const wait = retryAfterMillis(status, header, now);
          return wait === undefined || (Number.isFinite(wait) && wait > 0 && wait <= MAX_RETRY_AFTER_MILLIS);
        },
      ),
    );
  });
});
