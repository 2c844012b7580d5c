import type { Attributes } from '@opentelemetry/api';
import type { OmniMetricsHandle } from '../../instrumentation/register';
import type { ResolvedFamily } from '../../views/catalog';
import { UPSTREAM_FAMILIES } from '../../views/upstream-families';
import { OMNI_METER_NAME } from '../../views/views';

/**
 * Records one sample on every registered family straight through the OpenTelemetry meter, the
 * way a host with its own instruments would: upstream families get vLLM's `engine` label (engine
 * 2 = stage 1 / replica 1 with pools [1, 2, 1]), so the exposition shows the relabel at work.
 * Returns the attributes each family was recorded with (after relabelling).
 */
export function populateEveryFamily(handle: OmniMetricsHandle, value = 1): Map<string, Attributes> {
  const meter = handle.meterProvider.getMeter(OMNI_METER_NAME);
  const recorded = new Map<string, Attributes>();
  for (const family of handle.catalog.families) {
    const input = inputAttributes(family);
    const options = { description: family.help, unit: '' };
    switch (family.type) {
      case 'counter':
        meter.createCounter(family.instrumentName, options).add(value, input);
        break;
      case 'gauge':
        meter.createGauge(family.instrumentName, options).record(value, input);
        break;
      case 'histogram':
        meter
          .createHistogram(family.instrumentName, { ...options, advice: { explicitBucketBoundaries: [...(family.buckets ?? [])] } })
          .record(value, input);
        break;
    }
    recorded.set(family.name, exposedAttributes(family, input));
  }
  return recorded;
}

/** Label values named after the label, upstream-style `engine` instead of stage/replica. */
function inputAttributes(family: ResolvedFamily): Attributes {
  const attributes: Attributes = {};
  const declared = upstreamLabels(family) ?? family.labels;
  for (const label of declared) attributes[label] = label === 'engine' ? '2' : `${label}_value`;
  if (family.info) attributes.block_size = '16';
  return attributes;
}

function exposedAttributes(family: ResolvedFamily, input: Attributes): Attributes {
  if (!('engine' in input)) return input;
  const { engine: _engine, ...rest } = input;
  return { ...rest, stage: '1', replica: '1' };
}

function upstreamLabels(family: ResolvedFamily): readonly string[] | undefined {
  if (!family.key.startsWith('upstream.')) return undefined;
  const key = family.key.slice('upstream.'.length) as keyof typeof UPSTREAM_FAMILIES;
  return UPSTREAM_FAMILIES[key].labels;
}
