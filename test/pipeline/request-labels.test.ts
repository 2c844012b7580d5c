import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RequestLabeler, resolveRequestLabels, type LabelledRequest } from '../../instrumentation/recorders/request-labels';
import { OmniOptionError } from '../../views/common/option-checks';

const anyValue = fc.oneof(
  fc.string({ maxLength: 140 }),
  fc.integer(),
  fc.double(),
  fc.constant(undefined),
  fc.constant(null),
  fc.object(),
  fc.constantFrom('acme', 'globex', 'other'),
);

describe('RequestLabeler: bounded values whatever the requests carry', () => {
  it('property: every value is on the allow-list, among the first maxValues seen, or other; admitted values keep their series', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 5 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(anyValue, { maxLength: 300 }),
        (allow, maxValues, seen) => {
          const values = allow.filter((value) => value !== 'other');
          const [settings] = resolveRequestLabels(
            [{ name: 'tenant', from: (request: { readonly [key: string]: unknown }) => request.tenant, values, maxValues }],
            2000,
          );
          const labeler = new RequestLabeler([settings!]);
          const first = new Map<string, string>();
          const admitted = new Set<string>();
          for (const tenant of seen) {
            const [value] = labeler.valuesOf({ requestId: 'r', tenant });
            assert.ok(value !== undefined);
            if (value !== 'other' && !values.includes(value)) admitted.add(value);
            if (typeof tenant === 'string' && values.includes(tenant)) assert.equal(value, tenant, 'an allowed value is itself');
            const key = typeof tenant === 'string' ? tenant : typeof tenant === 'number' && Number.isFinite(tenant) ? String(tenant) : undefined;
            if (key !== undefined) {
              const before = first.get(key);
              if (before !== undefined) assert.equal(value, before, 'the same value, the same series');
              else first.set(key, value);
            }
          }
          assert.ok(admitted.size <= maxValues, `${admitted.size} admitted, maxValues ${maxValues}`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: any option value is accepted as settings or refused with an OmniOptionError naming requestLabels', () => {
    const labelish = fc.record(
      {
        name: fc.oneof(fc.constantFrom('tenant', 'priority', 'model_name', '__x', '1a', ''), fc.anything()),
        header: fc.oneof(fc.constant('x-tenant'), fc.anything()),
        values: fc.oneof(fc.array(fc.string({ maxLength: 4 }), { maxLength: 4 }), fc.anything()),
        maxValues: fc.oneof(fc.integer({ min: -2, max: 3000 }), fc.anything()),
        otherValue: fc.oneof(fc.constant('rest'), fc.anything()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.array(labelish, { maxLength: 3 }), fc.anything()), (option) => {
        try {
          const settings = resolveRequestLabels(option, 2000);
          assert.ok(option === undefined || (settings.length >= 1 && settings.length <= 2));
          for (const label of settings) assert.ok(label.values.length + label.maxValues + 1 <= 2000);
        } catch (error) {
          assert.ok(error instanceof OmniOptionError, String(error));
          assert.match(error.option, /^requestLabels/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('refuses each bad option with a message naming it', () => {
    const refused = (option: unknown, path: string, message: RegExp) =>
      assert.throws(
        () => resolveRequestLabels(option, 100),
        (error: unknown) => error instanceof OmniOptionError && error.option === path && message.test(error.message),
      );
    const from = (request: { readonly [key: string]: unknown }) => request.user;
    refused([], 'requestLabels', /1 or 2 labels/);
    refused(
      [
        { name: 'a', from, maxValues: 1 },
        { name: 'b', from, maxValues: 1 },
        { name: 'c', from, maxValues: 1 },
      ],
      'requestLabels',
      /1 or 2 labels/,
    );
    refused([{ name: 'reason', from, maxValues: 1 }], 'requestLabels[0].name', /is taken/);
    refused([{ name: 'ten-ant', from, maxValues: 1 }], 'requestLabels[0].name', /Prometheus label name/);
    refused([{ name: 'tenant', maxValues: 1 }], 'requestLabels[0]', /exactly one source/);
    refused([{ name: 'tenant', from, header: 'x', maxValues: 1 }], 'requestLabels[0]', /exactly one source/);
    refused([{ name: 'tenant', from }], 'requestLabels[0]', /needs a bound/);
    refused([{ name: 'tenant', from, maxValues: 100 }], 'requestLabels[0].maxValues', /more than cardinalityLimit \(100\)/);
    refused([{ name: 'tenant', from, values: ['a', 'a'] }], 'requestLabels[0].values[1]', /repeats/);
    refused([{ name: 'tenant', from, values: ['other'] }], 'requestLabels[0].values[0]', /the other value/);
    refused(
      [
        { name: 'tenant', from, maxValues: 1 },
        { name: 'tenant', header: 'x', maxValues: 1 },
      ],
      'requestLabels[1].name',
      /repeats/,
    );
    refused([{ name: 'tenant', from, maxValues: 1, colour: 1 }], 'requestLabels[0].colour', /unknown option/);
    refused([{ name: 'tenant', from: async () => 'acme', maxValues: 1 }], 'requestLabels[0].from', /must return the value itself, not a promise/);
    refused([{ name: 'tenant', from: async function* () {}, maxValues: 1 }], 'requestLabels[0].from', /must return the value itself, not a promise/);
  });

  it('reads a header from Node headers, a Headers object and a repeated header', () => {
    const [settings] = resolveRequestLabels([{ name: 'tenant', header: 'X-Tenant', maxValues: 5 }], 100);
    const labeler = new RequestLabeler([settings!]);
    assert.deepEqual(labeler.valuesOf({ requestId: 'a', headers: { 'x-tenant': 'acme' } }), ['acme']);
    assert.deepEqual(labeler.valuesOf({ requestId: 'b', headers: new Headers({ 'X-Tenant': 'globex' }) }), ['globex']);
    assert.deepEqual(labeler.valuesOf({ requestId: 'c', headers: { 'x-tenant': ['initech', 'x'] } }), ['initech']);
    assert.deepEqual(labeler.valuesOf({ requestId: 'd' }), ['other']);
  });

  it('a source that reads labels again (calls back into the host) gets the other values inside, its own value outside, and no recursion', () => {
    let inner: readonly string[] | undefined;
    let calls = 0;
    const [tenant, priority] = resolveRequestLabels(
      [
        {
          name: 'tenant',
          from: (request: LabelledRequest) => {
            calls++;
            inner = labeler.valuesOf({ requestId: `${request.requestId}-inner`, tenant: 'globex' });
            return request.tenant;
          },
          maxValues: 5,
        },
        { name: 'priority', from: (request: LabelledRequest) => request.priority, values: ['high'], otherValue: 'none' },
      ],
      100,
    );
    const labeler: RequestLabeler = new RequestLabeler([tenant!, priority!]);
    assert.deepEqual(labeler.valuesOf({ requestId: 'a', tenant: 'acme', priority: 'high' }), ['acme', 'high']);
    assert.deepEqual(inner, ['other', 'none']);
    assert.equal(calls, 1);
    assert.deepEqual(
      labeler.valuesOf({ requestId: 'b', tenant: 'globex', priority: 'high' }),
      ['globex', 'high'],
      'the labeler reads again after a re-entered read',
    );
  });
});
