import type { Attributes, Counter, Gauge, Histogram, Meter } from '@opentelemetry/api';
import type { FamilyKey, ResolvedCatalog, ResolvedFamily } from '../views/catalog';
import type { NamingScheme } from '../views/views';

/** Records one value on one series: `add` for counters, `record` for histograms, `set` for gauges. */
export interface BoundSeries {
  record(value: number): void;
}

/** Shared do-nothing series for families that are not registered in this configuration. */
export const NOOP_SERIES: BoundSeries = Object.freeze({ record(): void {} });

type AnyInstrument = { kind: 'counter'; instrument: Counter } | { kind: 'histogram'; instrument: Histogram } | { kind: 'gauge'; instrument: Gauge };

/**
 * The catalog's families as OpenTelemetry instruments on one meter. Created once at startup (and
 * again on `setMeterProvider`); recorders bind series from here and never touch names.
 */
export class FamilyInstruments {
  private readonly instruments = new Map<FamilyKey, AnyInstrument>();

  constructor(
    meter: Meter,
    readonly catalog: ResolvedCatalog,
    naming: NamingScheme = 'vllm',
  ) {
    for (const family of catalog.families) {
      this.instruments.set(family.key, createInstrument(meter, family, naming));
    }
  }

  /** Whether this configuration registers the family (recorders skip work for families that are off). */
  has(key: FamilyKey): boolean {
    return this.instruments.has(key);
  }

  family(key: FamilyKey): ResolvedFamily | undefined {
    return this.catalog.byKey(key);
  }

  /**
   * A series with a fixed attribute set. The attribute object is frozen and reused for every
   * record, so a record costs the SDK's own work and nothing more.
   */
  bind(key: FamilyKey, attributes: Attributes): BoundSeries {
    const entry = this.instruments.get(key);
    if (entry === undefined) return NOOP_SERIES;
    const frozen = Object.freeze({ ...attributes });
    switch (entry.kind) {
      case 'counter': {
        const counter = entry.instrument;
        return { record: (value) => counter.add(value, frozen) };
      }
      case 'histogram': {
        const histogram = entry.instrument;
        return { record: (value) => histogram.record(value, frozen) };
      }
      case 'gauge': {
        const gauge = entry.instrument;
        return { record: (value) => gauge.record(value, frozen) };
      }
    }
  }
}

function createInstrument(meter: Meter, family: ResolvedFamily, naming: NamingScheme): AnyInstrument {
  // The `vllm` scheme sets no unit: a collector's Prometheus translation would append one (`_s_seconds`).
  const options = { description: family.help, unit: naming === 'otel' ? family.unit : '' };
  switch (family.type) {
    case 'counter':
      return { kind: 'counter', instrument: meter.createCounter(family.instrumentName, options) };
    case 'gauge':
      return { kind: 'gauge', instrument: meter.createGauge(family.instrumentName, options) };
    case 'histogram':
      return {
        kind: 'histogram',
        instrument: meter.createHistogram(family.instrumentName, {
          ...options,
          // Also applied by our views; advice keeps the buckets right under a provider without them.
          advice: { explicitBucketBoundaries: [...(family.buckets ?? [])] },
        }),
      };
  }
}
