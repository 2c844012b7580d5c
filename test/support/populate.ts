import type { Attributes } from '@opentelemetry/api';
import type { OmniMetricsHandle } from '../../register';
import type { ResolvedFamily } from '../../views/catalog/catalog';
import { UPSTREAM_FAMILIES } from '../../views/catalog/upstream-families';

/**
 * Records one sample on every registered family through the store, bound the way vLLM labels
 * its series: upstream families get vLLM's `engine` label (engine 2 = stage 1 / replica 1 with
 * pools [1, 2, 1]), so the exposition shows the relabel at work. Returns the attributes each
 * family was recorded with (after relabelling).
 */
export function populateEveryFamily(handle: OmniMetricsHandle, value = 1): Map<string, Attributes> {
  const recorded = new Map<string, Attributes>();
  for (const family of handle.catalog.families) {
    const input = inputAttributes(family);
    handle.store.bindAttributes(family.key, input).record(value);
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
