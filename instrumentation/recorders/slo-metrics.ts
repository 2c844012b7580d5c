import { LimitedWarning } from '../../views/common/diag-warnings';
import { SLO_OBJECTIVES, type SloObjective, type SloObjectiveKey, type SloOptions } from '../../views/catalog/slo-families';
import type { LabelValue } from '../../views/store/family-series';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';
import { meetsObjective, objectiveValue, SLO_KEYS, type RequestTimings } from './slo-objectives';
import { SeriesTable } from '../series-table';
import { bindEager } from './eager-series';
import { UnreadableInput } from './never-throw';
import type { RecorderOptions } from './pipeline-metrics';

interface DeclaredObjective {
  readonly key: SloObjectiveKey;
  readonly objective: SloObjective;
  readonly threshold: number;
}

/** Finish reasons of a request that did not finish successfully: it is judged on nothing. */
const UNSUCCESSFUL_REASONS: ReadonlySet<unknown> = new Set(['abort', 'error']);
const NO_LABELS: readonly LabelValue[] = [];

/**
 * Goodput (the `slo` option): each request that finished successfully is judged against every
 * declared objective that applies to it, and counted once in `requests_good_total` when it met
 * them all, else once per objective missed in `slo_misses_total`. With `requestLabels`, both
 * carry the request's label values. A label set's series of both families are bound at its first
 * finished request (without request labels, at construction): the good series exists wherever
 * requests finished, so attainment (good ÷ finished) is defined even when none was good.
 */
export class OmniSloMetrics {
  private readonly logStats: boolean;
  private readonly objectives: readonly DeclaredObjective[];
  /** Without request labels: the one good series. */
  private readonly good: BoundSeries;
  /** With request labels: the good series by label values. */
  private readonly goodByLabels: SeriesTable | undefined;
  private readonly misses: SeriesTable;
  private readonly unreadable = new UnreadableInput('OmniSloMetrics');
  private readonly notNumbers = new LimitedWarning();

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions, slo: SloOptions) {
    this.logStats = options.logStats;
    this.objectives = SLO_KEYS.flatMap((key) => {
      const threshold = slo[key];
      return threshold === undefined ? [] : [{ key, objective: SLO_OBJECTIVES[key], threshold }];
    });
    const model = [options.modelName];
    this.good = bindEager(store, 'pipeline.requestsGood', model);
    const labelled = (store.family('pipeline.requestsGood')?.family.labels.length ?? 1) > 1;
    this.goodByLabels = labelled ? new SeriesTable(store, 'pipeline.requestsGood', model) : undefined;
    this.misses = new SeriesTable(store, 'pipeline.sloMisses', model);
    if (!labelled) for (const { objective } of this.objectives) this.misses.get(objective);
  }

  /**
   * A request finished with `finishedReason`: one that ended `abort` or `error` did not finish
   * successfully and counts nowhere; any other is judged on `request`. `values` are its request
   * label values (`requestLabels`; leave out without the option). A request whose timings are
   * not numbers is dropped with a warning.
   */
  requestFinished(values: readonly string[] | undefined, finishedReason: string, request: RequestTimings): void {
    if (!this.logStats || UNSUCCESSFUL_REASONS.has(finishedReason)) return;
    const objectives = this.objectives;
    let missed = 0;
    try {
      for (let i = 0; i < objectives.length; i++) {
        const { key, threshold } = objectives[i] as DeclaredObjective;
        const value = objectiveValue(key, request);
        if (value === undefined) continue;
        if (typeof value !== 'number' || Number.isNaN(value)) {
          return this.notNumbers.warn(`OmniSloMetrics.requestFinished dropped a request whose ${key} is not a number`);
        }
        if (!meetsObjective(value, threshold)) missed |= 1 << i;
      }
    } catch {
      return this.unreadable.dropped('requestFinished');
    }
    const [first, second] = Array.isArray(values) ? (values as readonly LabelValue[]) : NO_LABELS;
    const good = this.goodByLabels === undefined ? this.good : this.goodByLabels.get(first as LabelValue, second);
    if (missed === 0) good.record(1);
    for (let i = 0; i < objectives.length; i++) {
      const series = this.misses.get((objectives[i] as DeclaredObjective).objective, first, second);
      if ((missed & (1 << i)) !== 0) series.record(1);
    }
  }
}
