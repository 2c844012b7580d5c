import assert from 'node:assert/strict';
import { formatSummary } from '../../examples/load/format-summary';
import { runLoad, type LoadSummary } from '../../examples/load/run-load';
import { optionsFromEnv } from '../../examples/pipeline-env';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import { describeSlo, sloFromEnv } from '../../examples/slo-env';
import type { SloOptions } from '../../views/catalog/slo-families';
import { parseSamples } from '../support/exposition';
import { httpGet } from '../support/http';

describe('examples: objectives from SLO_* and the goodput the load saw', function () {
  this.timeout(60_000);

  it('SLO_* variables make the slo option of npm start and npm run load; unset or empty declares none; anything but a number above 0 is refused', () => {
    const env = { SLO_FIRST_OUTPUT_SECONDS: '0.5', SLO_E2E_SECONDS: ' 8 ', SLO_TPOT_SECONDS: '', SLO_AUDIO_RTF: '.9' };
    assert.deepEqual(sloFromEnv(env), { firstOutputSeconds: 0.5, e2eSeconds: 8, audioRtf: 0.9 });
    assert.deepEqual(optionsFromEnv(env).slo, { firstOutputSeconds: 0.5, e2eSeconds: 8, audioRtf: 0.9 });
    assert.equal(sloFromEnv({}), undefined);
    assert.equal(optionsFromEnv({}).slo, undefined);
    for (const text of ['0', '-1', 'fast', '1e999', '0x10', 'NaN']) {
      assert.throws(() => sloFromEnv({ SLO_AUDIO_TTFP_SECONDS: text }), { message: `SLO_AUDIO_TTFP_SECONDS must be a number above 0; got "${text}"` });
    }
    assert.equal(describeSlo({ firstOutputSeconds: 0.5, e2eSeconds: 8, audioRtf: 0.9 }), 'first_output ≤ 0.5 s, e2e ≤ 8 s, audio_rtf ≤ 0.9');
  });

  describe('a load run against the reference pipeline with the same objectives', () => {
    // The server measures from `generate` to its outputs, inside the client's round trip: each of these values is
    // smaller at the server than at the client, so a request the client saw meet one met it at the server too.
    const slo: SloOptions = { firstOutputSeconds: 0.03, e2eSeconds: 0.12, audioTtfpSeconds: 0.06 };
    let pipeline: ReferencePipeline;
    let summary: LoadSummary;
    let samples: ReturnType<typeof parseSamples>;

    before(async () => {
      // No silent audio loss: a request whose audio comes back empty has a first (empty) audio packet at the server, none at the client.
      pipeline = await startReferencePipeline({
        port: 0,
        metricsPort: false,
        profile: 'fast',
        simulation: { code2wav: { malformedProbability: 0 } },
        logIntervalSeconds: 0,
        logSink: { info: () => undefined },
        slo,
      });
      summary = await runLoad({
        baseUrl: `${pipeline.apiUrl}/v1`,
        requests: 60,
        concurrency: 4,
        maxTokens: 16,
        disconnectRatio: 0,
        imageRatio: 0.2,
        slo,
        seed: 11,
      });
      samples = parseSamples((await httpGet(pipeline.metricsUrl)).body);
    });

    after(() => pipeline?.stop());

    const server = (name: string, match: Record<string, string> = {}): number =>
      samples
        .filter((sample) => sample.name === name && Object.entries(match).every(([key, value]) => sample.labels[key] === value))
        .reduce((total, sample) => total + sample.value, 0);

    it('judges the requests it completed, and says so in its summary', () => {
      const goodput = summary.goodput;
      assert.ok(goodput !== undefined);
      assert.equal(goodput.completed, summary.outcomes.ok);
      assert.ok(goodput.good < goodput.completed && goodput.good > 0, `${goodput.good} of ${goodput.completed}`);
      assert.equal(goodput.perSecond, goodput.good / summary.wallSeconds);
      const text = formatSummary(summary);
      assert.ok(
        text.includes(
          `  goodput        ${goodput.perSecond.toFixed(2)} req/s: ${goodput.good} of ${goodput.completed} completed requests met first_output ≤ 0.03 s, e2e ≤ 0.12 s, audio_ttfp ≤ 0.06 s (`,
        ),
        text,
      );
      assert.ok(!text.includes('audio_rtf is'), 'no audio_rtf objective, no note about it');
    });

    // No client disconnects: one that leaves right after the last delta races the server's finished output.
    it('the server judged the same requests, and counted at least as many good and at most as many misses per objective', () => {
      const goodput = summary.goodput;
      assert.ok(goodput !== undefined);
      const finished = server('vllm:omni_requests_success_total') - server('vllm:omni_requests_success_total', { finished_reason: 'abort' });
      assert.equal(finished, goodput.completed);
      assert.ok(server('vllm:omni_requests_good_total') >= goodput.good, `server ${server('vllm:omni_requests_good_total')}, client ${goodput.good}`);
      for (const objective of ['first_output', 'e2e', 'audio_ttfp']) {
        const atServer = server('vllm:omni_slo_misses_total', { objective });
        assert.ok(atServer <= (goodput.misses[objective] ?? 0), `${objective}: server ${atServer}, client ${goodput.misses[objective] ?? 0}`);
      }
    });
  });
});
