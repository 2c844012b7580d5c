import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ExpositionParseError, parseExposition } from '../../exporters/engine-pull/exposition-parser';
import type { ParsedFamily } from '../../exporters/parsed-family';
import { formatGoFloat } from '../../views/common/go-float';
import { escapeLabelValue } from '../../views/store/label-text';
import { fixtureText } from './support/engine-server';

describe('engine pull: the strict exposition parser', () => {
  it("reads a vLLM server's exposition: colon names, counters under _total, _created gauge families, histograms, +Inf", () => {
    const families = parseExposition(fixtureText('vllm-current-dp2.prom'));
    const byName = new Map(families.map((family) => [family.name, family]));
    const prompt = byName.get('vllm:prompt_tokens_total');
    assert.equal(prompt?.type, 'counter');
    assert.equal(prompt?.help, 'Number of prefill tokens processed.');
    assert.deepEqual(prompt?.samples, [
      { name: 'vllm:prompt_tokens_total', labels: { engine: '0', model_name: 'org/dp-model' }, value: 3702 },
      { name: 'vllm:prompt_tokens_total', labels: { engine: '1', model_name: 'org/dp-model' }, value: 4936 },
    ]);
    assert.equal(byName.get('vllm:prompt_tokens_created')?.type, 'gauge');
    const e2e = byName.get('vllm:e2e_request_latency_seconds');
    assert.equal(e2e?.type, 'histogram');
    assert.equal(e2e?.samples.length, 2 * (21 + 1 + 2));
    assert.deepEqual(e2e?.samples[21], {
      name: 'vllm:e2e_request_latency_seconds_bucket',
      labels: { engine: '0', le: '+Inf', model_name: 'org/dp-model' },
      value: 3,
    });
  });

  it('OpenMetrics: `_created` after each series of a counter or histogram goes to the X_created gauge family, as in 0.0.4 text', () => {
    const families = parseExposition(
      [
        '# HELP c Bytes.',
        '# TYPE c counter',
        'c_total{engine="0"} 1.0',
        'c_created{engine="0"} 1.5',
        'c_total{engine="1"} 2.0',
        'c_created{engine="1"} 2.5',
        '# HELP h Sizes.',
        '# TYPE h histogram',
        'h_bucket{engine="0",le="+Inf"} 1.0',
        'h_count{engine="0"} 1.0',
        'h_sum{engine="0"} 3.0',
        'h_created{engine="0"} 1.5',
        'h_bucket{engine="1",le="+Inf"} 0.0',
        'h_count{engine="1"} 0.0',
        'h_sum{engine="1"} 0.0',
        'h_created{engine="1"} 2.5',
        '# EOF',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      families.map((family) => [family.name, family.type, family.help, family.samples.length]),
      [
        ['c', 'counter', 'Bytes.', 2],
        ['c_created', 'gauge', 'Bytes.', 2],
        ['h', 'histogram', 'Sizes.', 6],
        ['h_created', 'gauge', 'Sizes.', 2],
      ],
    );
    assert.deepEqual(families[3]?.samples[1], { name: 'h_created', labels: { engine: '1' }, value: 2.5 });
  });

  it('unescapes label values and HELP, reads NaN and ±Inf and timestamps', () => {
    const [family] = parseExposition(
      '# HELP a:b back\\\\slash\\nnewline\n# TYPE a:b gauge\na:b{x="q\\"uote",y="back\\\\slash\\nnl"} NaN 1700000000000\na:b{x="2"} -Inf\na:b{x="3",} +Inf\n',
    );
    assert.equal(family?.help, 'back\\slash\nnewline');
    assert.deepEqual(family?.samples[0]?.labels, { x: 'q"uote', y: 'back\\slash\nnl' });
    assert.ok(Number.isNaN(family?.samples[0]?.value));
    assert.equal(family?.samples[1]?.value, -Infinity);
    assert.equal(family?.samples[2]?.value, Infinity);
  });

  const malformed: Array<[string, string]> = [
    ['a second HELP', '# HELP a x\n# HELP a y\n'],
    ['a second TYPE', '# TYPE a gauge\n# TYPE a gauge\n'],
    ['an unknown type', '# TYPE a thing\n'],
    ['a family split in two groups', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="1"} 2\n'],
    ['a duplicate sample', 'a{x="1",y="2"} 1\na{y="2",x="1"} 2\n'],
    ['a bad escape', 'a{x="\\t"} 1\n'],
    ['an unterminated label value', 'a{x="1} 1\n'],
    ['a value that is not a float', 'a 1,5\n'],
    ['a missing value', 'a{x="1"}\n'],
    ['a bucket without le', '# TYPE h histogram\nh_bucket{x="1"} 1\n'],
    ['a bad le', '# TYPE h histogram\nh_bucket{le="one"} 1\n'],
    ['a label twice', 'a{x="1",x="2"} 1\n'],
    ['TYPE after samples', 'a 1\n# TYPE a gauge\n'],
    ['a metric name with a dash', 'a-b 1\n'],
  ];
  for (const [what, text] of malformed) {
    it(`rejects ${what}, naming the line`, () => {
      assert.throws(
        () => parseExposition(text),
        (error: unknown) => error instanceof ExpositionParseError && /^line \d+: /.test(error.message),
      );
    });
  }

  const labelName = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,8}$/).filter((name) => name !== 'le');
  const metricName = fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,12}$/);
  const value = fc.oneof(
    fc.double(),
    fc.integer().map((n) => n),
  );

  it('property: any families printed as prometheus_client prints them parse back to the same families', () => {
    const family = fc.record({
      name: metricName,
      type: fc.constantFrom('counter' as const, 'gauge' as const, 'untyped' as const),
      help: fc.string(),
      samples: fc.uniqueArray(fc.dictionary(labelName, fc.string(), { maxKeys: 3 }), {
        maxLength: 4,
        selector: (labels) => JSON.stringify(Object.entries(labels).sort()),
      }),
      values: fc.array(value, { minLength: 4, maxLength: 4 }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(family, { maxLength: 4, selector: (f) => f.name }), (families) => {
        // Names that one family would claim as its own samples are left out of the same run.
        fc.pre(families.every((a) => families.every((b) => a === b || !b.name.startsWith(a.name))));
        let text = '';
        const expected: ParsedFamily[] = [];
        for (const f of families) {
          text += `# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${f.name} ${f.type}\n`;
          const samples = f.samples.map((labels, i) => {
            const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
            const v = f.values[i] as number;
            text += `${f.name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${formatGoFloat(v)}\n`;
            return { name: f.name, labels: { ...labels }, value: Object.is(v, -0) ? -0 : v };
          });
          expected.push({ name: f.name, type: f.type, help: f.help, samples });
        }
        const parsed = parseExposition(text);
        assert.equal(parsed.length, expected.length);
        parsed.forEach((p, i) => {
          const e = expected[i] as ParsedFamily;
          assert.equal(p.name, e.name);
          assert.equal(p.type, e.type);
          assert.equal(p.help, e.help);
          assert.equal(p.samples.length, e.samples.length);
          p.samples.forEach((s, j) => {
            const es = e.samples[j] as ParsedFamily['samples'][number];
            assert.deepEqual(s.labels, es.labels);
            assert.ok(Object.is(s.value, es.value) || s.value === es.value, `${s.value} vs ${es.value}`);
          });
        });
      }),
      { numRuns: 300 },
    );
  });

  it('property: arbitrary text either parses or throws ExpositionParseError, nothing else', () => {
    const line = fc.oneof(
      fc.string(),
      fc.constantFrom('# HELP a b', '# TYPE a counter', '# TYPE h histogram', 'a 1', 'a{x="1"} 2', 'h_bucket{le="+Inf"} 1', 'a{x="\\', '{} 1', 'a{=""} 1'),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), (lines) => {
        try {
          parseExposition(lines.join('\n'));
        } catch (error) {
          assert.ok(error instanceof ExpositionParseError, String(error));
        }
      }),
      { numRuns: 500 },
    );
  });
});
