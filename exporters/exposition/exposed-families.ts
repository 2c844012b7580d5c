import type { Attributes } from '@opentelemetry/api';
import { readLabels, renderLabelText } from '../../views/store/label-text';
import type { ExpositionFamily } from './model';
import { NameClaims } from './name-claims';
import { seriesView, sourceLabelsOf } from './series-views';

/** The sources of one exposition, in the order they print. */
export interface ExpositionParts {
  /** `target_info`, when the exposition carries it. */
  readonly targetInfo?: ExpositionFamily;
  /** The package's own families (the store's, with pulled engines' series joined in), which every other part gives way to. */
  readonly own: readonly ExpositionFamily[];
  /** Families pulled from engines that the package does not have. */
  readonly pulled?: readonly ExpositionFamily[];
  /** The application's own instruments. */
  readonly application: readonly ExpositionFamily[];
}

/**
 * Everything one exposition prints, in order: `target_info`, the package's families, the engines'
 * others, the application's. A family whose names collide with one printed before it (a gauge
 * `app_x_created` beside a counter `app_x_total`, a gauge named like a catalog family's sample) is
 * left out, with one warning naming both (see `NameClaims`), so no format ever prints an invalid
 * exposition; the package's own families always print.
 */
export function exposedFamilies(parts: ExpositionParts): ExpositionFamily[] {
  const claims = new NameClaims();
  claims.reserve(parts.own);
  const targetInfo = parts.targetInfo === undefined ? [] : claims.keep([parts.targetInfo], "the resource's");
  const pulled = claims.keep(parts.pulled ?? [], "an engine's");
  const application = claims.keep(parts.application, "the application's");
  return [...targetInfo, ...parts.own, ...pulled, ...application];
}

/** The family with its scope's labels (`otel_scope_name`, `otel_scope_version`) added to every series. */
export function withScopeLabels(family: ExpositionFamily, scope: Attributes): ExpositionFamily {
  return {
    meta: family.meta,
    series: family.series.map((series) => {
      const attributes: Attributes = { ...(series.sourceLabels ?? Object.fromEntries(readLabels(series.plain))), ...scope };
      const labels = renderLabelText(attributes);
      return seriesView(series, { plain: labels.plain, leOffset: labels.leOffset, sourceLabels: sourceLabelsOf(attributes) });
    }),
  };
}
