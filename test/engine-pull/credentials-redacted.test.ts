import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag } from '@opentelemetry/api';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { packageDiag } from '../../views/common/package-diag';
import { captureConsole } from '../support/console-capture';
import { EngineServer, fixtureText } from './support/engine-server';

const PASSWORD = 'Sc4pe-pa55word';

/** `url` with `scrape:<PASSWORD>` as its userinfo, and how a message may print it. */
function withCredentials(url: string): { url: string; printed: string } {
  return { url: url.replace('http://', `http://scrape:${PASSWORD}@`), printed: url.replace('http://', 'http://***@') };
}

/** A port nothing listens on any more: an engine that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function register(engines: ReadonlyArray<{ stage: number; replica: number; url: string | URL }>): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({
    modelName: 'm',
    stagePools: [1, 1, 1],
    logStats: true,
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    selfCheck: false,
    enginePull: { engines: engines as never, timeoutMillis: 1000, cacheMillis: 0 },
  });
}

describe('engine pull: URL credentials never reach a log line, an error or the self-check', function () {
  this.timeout(20_000);
  beforeEach(() => {
    diag.disable();
    packageDiag.resetLevel();
  });

  it('an engine down, one answering garbage and one printing a family it cannot pass are named with *** for their userinfo and query values', async () => {
    // The engine that is down also carries its token in the query, as some gateways take it.
    const down = withCredentials(`http://127.0.0.1:${await closedPort()}/metrics?token=${PASSWORD}`);
    down.printed = down.printed.replace(`token=${PASSWORD}`, 'token=***');
    const garbage = await EngineServer.start('vllm:x{engine="0" 1\n');
    const summary = await EngineServer.start(
      `${fixtureText('vllm-current-engine0.prom')}# HELP vllm:step_seconds s\n# TYPE vllm:step_seconds summary\nvllm:step_seconds_count 1.0\nvllm:step_seconds_sum 0.5\n`,
    );
    const unparsable = withCredentials(garbage.url);
    const summarizing = withCredentials(summary.url);
    let report = '';
    const printed = await captureConsole(async () => {
      const handle = await register([
        { stage: 0, replica: 0, url: down.url },
        { stage: 1, replica: 0, url: unparsable.url },
        { stage: 2, replica: 0, url: summarizing.url },
      ]);
      try {
        await handle.metricsText();
        report = JSON.stringify(handle.selfCheck());
      } finally {
        await handle.shutdown();
        await garbage.down();
        await summary.down();
      }
    });
    const text = printed.map((line) => line.text);
    assert.deepEqual(
      text.filter((line) => line.includes(PASSWORD)),
      [],
    );
    assert.ok(!report.includes(PASSWORD));
    assert.ok(
      text.some((line) => line.includes(`engine metrics at ${down.printed} not served (connect ECONNREFUSED`)),
      JSON.stringify(text),
    );
    assert.ok(
      text.some((line) => line.includes(`engine metrics at ${unparsable.printed} not served (line 1:`)),
      JSON.stringify(text),
    );
    assert.ok(
      text.some((line) => line.includes(`vllm:step_seconds of engine 0 of ${summarizing.printed} is a summary`)),
      JSON.stringify(text),
    );
  });

  it('a refused enginePull URL is echoed with *** for its userinfo: one that does not parse, one given twice, a URL object', async () => {
    const refusals: Array<[string, ReadonlyArray<{ stage: number; replica: number; url: string | URL }>, RegExp]> = [
      [
        'a port out of range',
        [{ stage: 0, replica: 0, url: `http://scrape:${PASSWORD}@127.0.0.1:99999/metrics` }],
        /got the string "http:\/\/\*\*\*@127\.0\.0\.1:99999\/metrics"$/,
      ],
      [
        'a password with a slash',
        [{ stage: 0, replica: 0, url: `http://scrape:${PASSWORD}/x@127.0.0.1/metrics` }],
        /got the string "http:\/\/\*\*\*@127\.0\.0\.1\/metrics"$/,
      ],
      [
        'another scheme',
        [{ stage: 0, replica: 0, url: `ftp://scrape:${PASSWORD}@127.0.0.1/metrics` }],
        /got the string "ftp:\/\/\*\*\*@127\.0\.0\.1\/metrics"$/,
      ],
      [
        'one engine given to two replicas',
        [
          { stage: 0, replica: 0, url: `http://scrape:${PASSWORD}@127.0.0.1:8000/metrics` },
          { stage: 1, replica: 0, url: `http://scrape:${PASSWORD}@127.0.0.1:8000/metrics` },
        ],
        /engine 0 of http:\/\/\*\*\*@127\.0\.0\.1:8000\/metrics is already another replica's$/,
      ],
      [
        'a URL object',
        [{ stage: 0, replica: 0, url: new URL(`http://scrape:${PASSWORD}@127.0.0.1/metrics`) }],
        /got the URL object "http:\/\/\*\*\*@127\.0\.0\.1\/metrics"$/,
      ],
    ];
    for (const [what, engines, message] of refusals) {
      await assert.rejects(register(engines), (error: Error) => {
        assert.ok(!error.message.includes(PASSWORD), `${what}: ${error.message}`);
        assert.match(error.message, message, what);
        return true;
      });
    }
  });
});
