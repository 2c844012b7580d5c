import type { ExpositionType } from './model';
import type { NameEscaping } from './name-escaping';

/** The text formats a scrape can be answered in (protobuf is offered beside them, see `WireFormat`). */
export type ExpositionFormat = 'text' | 'openmetrics';

/** Every format the writers produce. */
export type WireFormat = ExpositionFormat | 'protobuf';

/**
 * Text is handed on in pieces of about this many characters: a string built by `+=` is a tree of
 * pieces that must be copied flat before it can be sent, and one tree of a whole large scrape
 * stays alive through many young-generation collections, which then copy it over and over. Pieces
 * of this size die young, and each is a natural point for a sliced rendering to yield.
 */
export const PIECE_CHARACTERS = 16_384;

export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** Counters and histograms carry a `_created` companion, as prometheus_client prints it. */
export function hasCreatedSeries(type: ExpositionType): boolean {
  return type === 'counter' || type === 'histogram';
}

/** The family name without a counter's `_total`: OpenMetrics' metadata name and the `_created` sample's stem. */
export function familyStem(name: string, type: ExpositionType): string {
  return type === 'counter' && name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
}

/** Whether `PROMETHEUS_DISABLE_CREATED_SERIES` turns `_created` off, read as prometheus_client reads it. */
export function createdSeriesDisabledByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['true', '1', 't'].includes((env.PROMETHEUS_DISABLE_CREATED_SERIES ?? 'False').toLowerCase());
}

/**
 * What one rendering is of, as a key renderings are shared by: the format, and the escaping of
 * names that are not legacy Prometheus names when it is not the default `underscores`.
 */
export type RenderKey = WireFormat | `${WireFormat};escaping=${Exclude<NameEscaping, 'underscores'>}`;

export function renderKey(format: WireFormat, escaping: NameEscaping): RenderKey {
  return escaping === 'underscores' ? format : `${format};escaping=${escaping}`;
}

export function renderRequest(key: RenderKey): { readonly format: WireFormat; readonly escaping: NameEscaping } {
  const [format, escaping] = key.split(';escaping=') as [WireFormat, NameEscaping | undefined];
  return { format, escaping: escaping ?? 'underscores' };
}
