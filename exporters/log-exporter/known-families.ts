import { resolveFullCatalog, type ResolvedCatalog } from '../../views/catalog/catalog';
import { PIPELINE_PREFIXES } from '../../views/catalog/names';

/** What the log line needs of a catalog family: the exposed name and the UCUM unit. */
export interface KnownFamily {
  readonly name: string;
  readonly unit: string;
}

let builtIn: ReadonlyMap<string, KnownFamily> | undefined;

/**
 * Stream name → family, for every family the package knows (both pipeline prefixes) plus the
 * given catalog's (custom families from a config file). Keys are the exposed name and the
 * `otel`-scheme stream name, so either naming scheme logs under the exposed name, as the
 * Prometheus endpoint prints it. Built once; the catalog's entries win.
 */
export function knownFamilies(catalog?: ResolvedCatalog): ReadonlyMap<string, KnownFamily> {
  builtIn ??= index(PIPELINE_PREFIXES.map((prefix) => resolveFullCatalog({ prefix })));
  return catalog === undefined ? builtIn : index([catalog], builtIn);
}

function index(catalogs: readonly ResolvedCatalog[], base?: ReadonlyMap<string, KnownFamily>): Map<string, KnownFamily> {
  const map = new Map<string, KnownFamily>(base);
  for (const catalog of catalogs) {
    for (const family of catalog.families) {
      const entry = { name: family.name, unit: family.unit };
      map.set(family.name, entry);
      map.set(family.otelName, entry);
    }
  }
  return map;
}
