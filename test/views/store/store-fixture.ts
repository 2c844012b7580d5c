import { diag, DiagLogLevel } from '@opentelemetry/api';
import { resolveCatalog, type CatalogOptions } from '../../../views/catalog/catalog';
import { SeriesStore, type SeriesStoreOptions } from '../../../views/store/series-store';

/** A store over the catalog with creation times 1700000000.5, 1700000001.5, … seconds, one per series. */
export function fixedClockStore(catalog: CatalogOptions = { logStats: true }, options: Partial<SeriesStoreOptions> = {}): SeriesStore {
  let next = 1_700_000_000_500;
  return new SeriesStore(resolveCatalog(catalog), { modelName: 'm', now: () => (next += 1000) - 1000, ...options });
}

/** Runs `work` with diag warnings captured. */
export function withWarnings<T>(work: () => T): { result: T; warnings: string[] } {
  const warnings: string[] = [];
  diag.setLogger({ error: () => {}, warn: (message: string) => warnings.push(message), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  try {
    return { result: work(), warnings };
  } finally {
    diag.disable();
  }
}
