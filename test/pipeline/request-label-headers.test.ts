import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RequestLabeler, resolveRequestLabels } from '../../instrumentation/recorders/request-labels';

function labelerFor(header: string): RequestLabeler {
  const [settings] = resolveRequestLabels([{ name: 'priority', header, values: ['low', 'high'] }], 100);
  return new RequestLabeler([settings!]);
}

describe('request labels: a header of a plain object, in any case', () => {
  it("reads { 'X-Priority': 'low' } for header x-priority, and the reverse", () => {
    assert.deepEqual(labelerFor('x-priority').valuesOf({ requestId: 'a', headers: { 'X-Priority': 'low' } }), ['low']);
    assert.deepEqual(labelerFor('X-Priority').valuesOf({ requestId: 'b', headers: { 'x-PRIORITY': ['high', 'low'] } }), ['high']);
    assert.deepEqual(labelerFor('x-priority').valuesOf({ requestId: 'c', headers: { 'X-Priority-Other': 'low' } }), ['other']);
  });

  it('finds the header whatever the casing of the name and of the key', () => {
    const casing = fc.array(fc.boolean(), { minLength: 10, maxLength: 10 });
    const spell = (name: string, upper: boolean[]): string => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join('');
    fc.assert(
      fc.property(casing, casing, fc.constantFrom('low', 'high'), (optionCase, keyCase, value) => {
        const labeler = labelerFor(spell('x-priority', optionCase));
        assert.deepEqual(labeler.valuesOf({ requestId: 'r', headers: { [spell('x-priority', keyCase)]: value } }), [value]);
      }),
    );
  });
});
