import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { OmniMetricsOptions } from '../../options';
import { resolveOmniSettings } from '../../settings';
import { OmniOptionError } from '../../views/common/option-checks';

/** Keys an object inherits from Object.prototype, and `__proto__`, which an object literal takes as its prototype. */
const PROTOTYPE_KEYS = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', '__defineGetter__'];

/** Every option that is an object keyed by the user's strings (or by names it checks), with `inner` in it. */
const OPTION_OBJECTS: Readonly<Record<string, (inner: object) => Partial<OmniMetricsOptions>>> = {
  options: (inner) => ({ ...inner }),
  prometheus: (inner) => ({ prometheus: inner }),
  otlp: (inner) => ({ exporters: ['otlp'], otlp: { endpoint: 'http://127.0.0.1:9/v1/metrics', ...inner } }),
  'otlp.headers': (inner) => ({ exporters: ['otlp'], otlp: { endpoint: 'http://127.0.0.1:9/v1/metrics', headers: inner as Record<string, string> } }),
  nativeHistograms: (inner) => ({ nativeHistograms: inner }),
  features: (inner) => ({ logStats: true, features: inner }),
  cacheConfig: (inner) => ({ logStats: true, cacheConfig: inner as Record<string, string> }),
  'requestLabels[0]': (inner) => ({ requestLabels: [{ name: 'tenant', maxValues: 3, from: () => 'x', ...inner }] }),
  enginePull: (inner) => ({ enginePull: inner as never }),
  resource: (inner) => ({ resource: inner as never }),
  selfCheck: (inner) => ({ selfCheck: inner as never }),
  customHistogramBuckets: (inner) => ({ customHistogramBuckets: inner as Record<string, number[]> }),
};

describe('option objects with keys named like Object.prototype members', () => {
  it('property: every option object is taken or refused with an OmniOptionError, never a raw TypeError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(OPTION_OBJECTS)),
        fc.uniqueArray(fc.constantFrom(...PROTOTYPE_KEYS), { minLength: 1, maxLength: 3 }),
        fc.constantFrom<unknown>(1, 'x', [1, 2], {}, null, true),
        fc.boolean(),
        (option, keys, value, asJson) => {
          // JSON.parse makes `__proto__` an own key, as a config file would; a literal spread copies own keys only.
          const inner = asJson
            ? (JSON.parse(JSON.stringify(Object.fromEntries(keys.map((key) => [key, value])))) as object)
            : Object.fromEntries(keys.map((key) => [key, value]));
          const options = { modelName: 'm', stagePools: [1], ...OPTION_OBJECTS[option]?.(inner) } as OmniMetricsOptions;
          try {
            resolveOmniSettings(options, {});
          } catch (error) {
            assert.ok(error instanceof OmniOptionError, `${option} ${JSON.stringify(keys)}: ${String(error)}`);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
