import type { FamilyType } from '../views/family-definition';

/**
 * The pieces of the two text formats that the store renderer and the generic serializer share,
 * so their bytes never drift apart.
 */

export type ExpositionFormat = 'text' | 'openmetrics';

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
export function hasCreatedSeries(type: FamilyType): boolean {
  return type === 'counter' || type === 'histogram';
}

/** The family name without a counter's `_total`: OpenMetrics' metadata name and the `_created` sample's stem. */
export function familyStem(name: string, type: FamilyType): string {
  return type === 'counter' && name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
}

/** `# HELP` and `# TYPE` of a family (0.0.4 text: under the `_total` name; OpenMetrics: under the stem). */
export function familyHeader(name: string, type: FamilyType, help: string, openMetrics: boolean): string {
  const metadataName = openMetrics ? familyStem(name, type) : name;
  return `# HELP ${metadataName} ${escapeHelp(help, openMetrics)}\n# TYPE ${metadataName} ${type}\n`;
}

/** The 0.0.4 text format's separate gauge family of `_created` samples, printed after the family's own samples. */
export function createdHeader(name: string, type: FamilyType, help: string): string {
  const createdName = `${familyStem(name, type)}_created`;
  return `# HELP ${createdName} ${escapeHelp(help, false)}\n# TYPE ${createdName} gauge\n`;
}

/**
 * OpenMetrics treats a histogram's `_sum` as a counter that must not be negative, and has `_count`
 * and `_sum` appear together: a histogram whose sum is negative (negative observations) carries
 * neither, its `+Inf` bucket still counting everything. The 0.0.4 text format prints both either
 * way, as prometheus_client does.
 */
export function omitsCountAndSum(sum: number, openMetrics: boolean): boolean {
  return openMetrics && sum < 0;
}

/** Whether `PROMETHEUS_DISABLE_CREATED_SERIES` turns `_created` off, read as prometheus_client reads it. */
export function createdSeriesDisabledByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['true', '1', 't'].includes((env.PROMETHEUS_DISABLE_CREATED_SERIES ?? 'False').toLowerCase());
}

function escapeHelp(help: string, openMetrics: boolean): string {
  const escaped = help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return openMetrics ? escaped.replace(/"/g, '\\"') : escaped;
}
