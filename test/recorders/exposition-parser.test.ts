import assert from 'node:assert/strict';
import { histogramOf, parseGoFloat, parseSampleLine, sampleValue, seriesOf } from '../support/exposition';

/** The test helpers the recorder tests rely on: if they mis-read, every exact-value assertion is void. */
describe('test support: exposition readers', () => {
  const text = [
    '# HELP x_total A counter.',
    '# TYPE x_total counter',
    'x_total{b="2",a="1"} 3.0',
    'x_total{a="1"} 4.0',
    'x_total{a="quote \\" comma, brace } backslash \\\\ newline \\n end",b="2"} 5.0',
    'plain 1e+06',
    'ts_sample{a="1"} 7.5 1700000000000',
    '# TYPE h histogram',
    'h_bucket{le="0.5",m="x"} 1.0',
    'h_bucket{le="1.0",m="x"} 2.0',
    'h_bucket{le="+Inf",m="x"} 3.0',
    'h_count{m="x"} 3.0',
    'h_sum{m="x"} 0.3000000000000001',
    'h_bucket{le="+Inf",m="y"} 0.0',
    'h_count{m="y"} 0.0',
    'h_sum{m="y"} 0.0',
    '',
  ].join('\n');

  it('matches label sets exactly and order-insensitively', () => {
    assert.equal(sampleValue(text, 'x_total', { a: '1', b: '2' }), 3);
    assert.equal(sampleValue(text, 'x_total', { a: '1' }), 4);
    assert.equal(sampleValue(text, 'x_total', { b: '2' }), undefined);
    assert.equal(sampleValue(text, 'x_total', { a: '1', b: '2', c: '3' }), undefined);
    assert.equal(sampleValue(text, 'plain', {}), 1e6);
    assert.equal(sampleValue(text, 'ts_sample', { a: '1' }), 7.5);
  });

  it('unescapes quotes, backslashes and newlines inside label values', () => {
    const value = 'quote " comma, brace } backslash \\ newline \n end';
    assert.equal(sampleValue(text, 'x_total', { a: value, b: '2' }), 5);
    assert.deepEqual(seriesOf(text, 'x_total')[2], { a: value, b: '2' });
  });

  it('reads a histogram series: buckets in order, count and sum', () => {
    assert.deepEqual(histogramOf(text, 'h', { m: 'x' }), {
      buckets: [
        ['0.5', 1],
        ['1.0', 2],
        ['+Inf', 3],
      ],
      count: 3,
      sum: 0.3000000000000001,
    });
    assert.deepEqual(histogramOf(text, 'h', { m: 'y' })?.buckets, [['+Inf', 0]]);
    assert.equal(histogramOf(text, 'h', { m: 'z' }), undefined);
  });

  it('parses Go floats and rejects malformed lines', () => {
    assert.equal(parseGoFloat('+Inf'), Infinity);
    assert.equal(parseGoFloat('-Inf'), -Infinity);
    assert.ok(Number.isNaN(parseGoFloat('NaN')));
    assert.equal(parseGoFloat('2.097152e+06'), 2097152);
    assert.equal(parseGoFloat('1e+012'), 1e12);
    assert.throws(() => parseGoFloat('1.0.0'), SyntaxError);
    assert.throws(() => parseSampleLine('x{a="1"'), SyntaxError);
    assert.throws(() => parseSampleLine('x{a="1} 1.0'), SyntaxError);
    assert.throws(() => parseSampleLine('x{a=1} 1.0'), SyntaxError);
    assert.throws(() => parseSampleLine('x{a="1",a="2"} 1.0'), SyntaxError);
    assert.throws(() => parseSampleLine('x{a="\\q"} 1.0'), SyntaxError);
    assert.throws(() => parseSampleLine('x 1.0 junk'), SyntaxError);
  });
});
