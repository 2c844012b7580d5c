import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ExpositionParseError, MAX_LABEL_VALUE_CHARS, parseExposition, parseExpositionInSlices } from '../../exporters/engine-pull/exposition-parser';
import type { ParsedFamily } from '../../exporters/parsed-family';
import { MAX_NUMBER_CHARS } from '../../exporters/engine-pull/go-float-text';
import { registerOmniMetrics } from '../../register';
import { assertValidEverywhere } from './support/checkers';
import { EngineServer } from './support/engine-server';
import { allowPrinted } from '../support/console-capture';
import { needPeer } from '../support/peers/need-peer';

/** Parses, returning the families or the parse error; anything else thrown fails the test. */
function tryParse(text: string): ParsedFamily[] | ExpositionParseError {
  try {
    return parseExposition(text);
  } catch (error) {
    assert.ok(error instanceof ExpositionParseError, String(error));
    return error;
  }
}

const DIGITS = '1'.repeat(100_000);

describe('engine pull: the exposition parser refuses what it cannot bound, naming where', () => {
  // How long each takes, and that the time grows linearly with the input: `bench/parser-linearity.ts`.
  const refused: Array<[string, string, string]> = [
    ['a value of 100 000 digits and one bad character', `a ${DIGITS}x\n`, `line 1: invalid value "${'1'.repeat(40)}…" at column 3`],
    ['a value of 100 000 digits with a dot and one bad character', `a 1.${DIGITS}e\n`, `line 1: invalid value "1.${'1'.repeat(38)}…" at column 3`],
    [
      'an le of 100 000 digits and one bad character',
      `# TYPE h histogram\nh_bucket{le="${DIGITS}x"} 1\n`,
      'line 2: label value longer than 4096 characters at column 4111',
    ],
    ['a label value of 200 000 characters', `a{x="${'y'.repeat(200_000)}"} 1\n`, 'line 1: label value longer than 4096 characters at column 4103'],
    ['a metric name of 200 000 characters', `${'a'.repeat(200_000)} 1\n`, 'line 1: metric name longer than 512 characters at column 1'],
    ['200 000 blanks before the value', `a${' '.repeat(200_000)}1x\n`, 'line 1: invalid value "1x" at column 200002'],
    ['a HELP of 200 000 escapes', `# HELP a ${'\\\\'.repeat(100_000)}\n`, 'line 1: HELP for a longer than 16384 characters'],
    ['a TYPE line of 200 000 blanks', `# TYPE a${' '.repeat(200_000)}\n`, 'line 1: unknown type "" for a'],
  ];
  for (const [what, text, message] of refused) {
    it(`${what}: refused with the line, the column and what is wrong`, () => {
      const outcome = tryParse(text);
      assert.ok(outcome instanceof ExpositionParseError);
      assert.equal(outcome.message, message);
    });
  }

  it(`refuses a value longer than ${MAX_NUMBER_CHARS} characters and a label value longer than ${MAX_LABEL_VALUE_CHARS}, and 1e999`, () => {
    assert.ok(tryParse(`a 0.${'0'.repeat(MAX_NUMBER_CHARS)}1\n`) instanceof ExpositionParseError);
    assert.ok(!(tryParse(`a 0.${'0'.repeat(MAX_NUMBER_CHARS - 4)}1\n`) instanceof ExpositionParseError));
    assert.ok(tryParse(`a{x="${'y'.repeat(MAX_LABEL_VALUE_CHARS + 1)}"} 1\n`) instanceof ExpositionParseError);
    assert.ok(!(tryParse(`a{x="${'y'.repeat(MAX_LABEL_VALUE_CHARS)}"} 1\n`) instanceof ExpositionParseError));
    assert.ok(tryParse('a 1e999\n') instanceof ExpositionParseError);
    assert.ok(tryParse('# TYPE h histogram\nh_bucket{le="1e999"} 1\n') instanceof ExpositionParseError);
  });

  it('property: arbitrary text with long runs of one token either parses or throws ExpositionParseError', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom('1', '.', 'e', '+', '-', ' ', '\t', '"', '\\', '{', '}', '=', ',', '#', 'a', ':', '\n', 'le="', 'Inf', 'NaN', '# HELP ', '# TYPE a '),
    );
    const run = fc.tuple(piece, fc.integer({ min: 1, max: 50_000 })).map(([p, n]) => p.repeat(Math.ceil(n / Math.max(1, p.length))));
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, run), { minLength: 1, maxLength: 12 }), (parts) => {
        tryParse(parts.join('').slice(0, 200_000));
      }),
      { numRuns: 60 },
    );
  });

  it('property: arbitrary bytes (as UTF-8 text) either parse or throw ExpositionParseError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        tryParse(Buffer.from(bytes).toString('utf8'));
      }),
      { numRuns: 300 },
    );
  });

  it('parses in slices: the same families as at once, and the event loop is served between slices', async () => {
    let text = '# HELP vllm:wide x\n# TYPE vllm:wide gauge\n';
    for (let i = 0; i < 30_000; i++) text += `vllm:wide{engine="0",id="${i}"} ${i}\n`;
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      const sliced = await parseExpositionInSlices(text, {});
      assert.deepEqual(sliced, parseExposition(text));
      assert.ok(ticks > 0, 'timers ran while parsing');
    } finally {
      clearInterval(ticker);
    }
  });

  it('parses in slices up to a deadline, then gives up', async () => {
    const text = 'a 1\n'
      .replace('a 1', 'a{x="1"} 1')
      .repeat(1)
      .concat(Array.from({ length: 200_000 }, (_, i) => `b{i="${i}"} 1\n`).join(''));
    await assert.rejects(parseExpositionInSlices(text, {}, { deadlineMillis: Date.now() + 5 }), /parsing took longer than the time left/);
  });

  it('stores at most maxSeriesPerFamily series of a family, and nothing of a family not kept', () => {
    let text = '# TYPE h histogram\n';
    for (let i = 0; i < 10; i++) text += `h_bucket{i="${i}",le="+Inf"} 1\nh_count{i="${i}"} 1\nh_sum{i="${i}"} 1\n`;
    text += 'other 1\n';
    const [h, ...rest] = parseExposition(text, { maxSeriesPerFamily: 3, keep: (name) => name === 'h' });
    assert.equal(h?.samples.length, 9);
    assert.equal(h?.droppedSamples, 21);
    assert.deepEqual(rest, []);
  });
});

describe('engine pull: whatever the parser accepts, the merged exposition is valid', function () {
  needPeer('debian-prometheus', this);
  needPeer('debian-prometheus-client', this);
  const labelName = fc.oneof(fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,6}$/), fc.constantFrom('le', 'quantile', 'engine', '__name__', 'stage'));
  const labelValue = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('0', '1', '1.0', '+Inf', 'NaN', '-1', '1e999', '\\', '"', '\n', '\r'));
  const name = fc.oneof(
    fc.stringMatching(/^vllm:[a-z]{1,3}(_total|_created|_count|_sum|_bucket)?$/),
    fc.constantFrom('vllm:omni_num_requests_running', 'vllm:omni_engine_scrape_up', 'vllm:prompt_tokens_total', 'vllm:prompt_tokens_created'),
  );
  const value = fc.oneof(
    fc.constantFrom('1', '0', '-1', '1.5', 'NaN', '+Inf', '-Inf', '1e3', '2', '3'),
    fc.double().map((d) => String(d)),
  );
  const line = fc.oneof(
    fc
      .tuple(fc.constantFrom('HELP', 'TYPE'), name, fc.constantFrom('counter', 'gauge', 'histogram', 'summary', 'untyped', 'some help'))
      .map(([keyword, n, rest]) => `# ${keyword} ${n} ${rest}`),
    fc.tuple(name, fc.dictionary(labelName, labelValue, { maxKeys: 3 }), value).map(
      ([n, labels, v]) =>
        `${n}{${Object.entries(labels)
          .map(([k, lv]) => `${k}="${lv.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
          .join(',')}} ${v}`,
    ),
  );

  it('property: promtool and prometheus_client text and OpenMetrics parsers accept every scrape of a pipeline pulling what the parser accepted', async () => {
    const bodies: string[] = [];
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 12 }), (lines) => {
        const text = `${lines.join('\n')}\n`;
        if (!(tryParse(text) instanceof ExpositionParseError)) bodies.push(text);
      }),
      { numRuns: 3000 },
    );
    assert.ok(bodies.length >= 40, `${bodies.length} accepted bodies`);
    // The external checkers cost a process each: ten engines, each printing one accepted body, per pipeline and per check.
    const ENGINES = 10;
    const engines = await Promise.all(Array.from({ length: ENGINES }, () => EngineServer.start('')));
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [ENGINES],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      processMetrics: false,
      enginePull: { engines: engines.map((engine, replica) => ({ stage: 0, replica, url: engine.url })), cacheMillis: 0, timeoutMillis: 2000 },
    });
    try {
      for (let batch = 0; batch < 4; batch++) {
        const batchBodies = bodies.slice(batch * ENGINES, (batch + 1) * ENGINES);
        engines.forEach((engine, i) => (engine.text = batchBodies[i] ?? ''));
        // Whatever the pull leaves out of these random bodies is said, in lines naming the engine and the family.
        const [text, openMetrics] = await allowPrinted([/^omni-otel-metrics: \S+ of engine \d+ of http:\/\/127\.0\.0\.1:\d+\/metrics /], async () => [
          await handle.metricsText(),
          await handle.metricsText('openmetrics'),
        ]);
        await assertValidEverywhere(text, openMetrics).catch((error: unknown) => {
          throw new Error(`engine bodies ${JSON.stringify(batchBodies)}: ${String(error)}`);
        });
      }
    } finally {
      await handle.shutdown();
      await Promise.all(engines.map((engine) => engine.down()));
    }
  });
});
