import type { CustomFamily, ResolvedFamily } from '../../views/catalog/catalog';
import { WarnOnce } from '../../views/common/diag-warnings';
import type { FamilyType } from '../../views/catalog/family-definition';
import type { FamilySeries, LabelValue } from '../../views/store/family-series';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';

/**
 * The labels of one record into a custom family: a value for every label the family declares in
 * the config file except `model_name`, which the recorder fills in with the registered model
 * name. Values are strings or numbers (a number prints as `String(n)`). Name the declared labels
 * as `L` (`custom.counter<'stage' | 'hit'>(name)`) to have the compiler check the keys.
 */
export type CustomLabels<L extends string = string> = { readonly [K in Exclude<L, 'model_name'>]: LabelValue };

/** A counter family from the config file. Increments must be finite and `>= 0`. */
export interface CustomCounter<L extends string = string> {
  /** The family as the config file declares it: exposed `name`, `help`, declared `labels`. */
  readonly family: CustomFamily;
  /** Adds `value` to the series of `labels` (created at zero on its first record). */
  add(value: number, labels?: CustomLabels<L>): void;
  /** The series of `labels`, checked once: `add` then costs a comparison and a cell update. */
  bind(labels?: CustomLabels<L>): { add(value: number): void };
}

/** A gauge family from the config file. Values must be finite. */
export interface CustomGauge<L extends string = string> {
  /** The family as the config file declares it: exposed `name`, `help`, declared `labels`. */
  readonly family: CustomFamily;
  /** Sets the series of `labels` to `value`. */
  set(value: number, labels?: CustomLabels<L>): void;
  /** The series of `labels`, checked once: `set` then costs a comparison and a cell update. */
  bind(labels?: CustomLabels<L>): { set(value: number): void };
}

/** A histogram family from the config file, with the buckets declared there. Values must be finite. */
export interface CustomHistogram<L extends string = string> {
  /** The family as the config file declares it: exposed `name`, `help`, declared `labels`, `buckets`. */
  readonly family: CustomFamily;
  /** Observes `value` in the series of `labels`. */
  observe(value: number, labels?: CustomLabels<L>): void;
  /** The series of `labels`, checked once: `observe` then costs a comparison and a cell update. */
  bind(labels?: CustomLabels<L>): { observe(value: number): void };
}

/** A custom family's series of one label set, checked once: each record costs a comparison and a cell update. */
export type BoundCustomCounter = ReturnType<CustomCounter['bind']>;
export type BoundCustomGauge = ReturnType<CustomGauge['bind']>;
export type BoundCustomHistogram = ReturnType<CustomHistogram['bind']>;

const METHOD_OF: Readonly<Record<FamilyType, string>> = { counter: 'add', gauge: 'set', histogram: 'observe' };

/**
 * Records the families declared under `families:` in the config file (`configFile`) into the
 * series store, like every catalog family: one HELP/TYPE block per family in `/metrics`, the same
 * series over OTLP, the store's cardinality limit and replica removal.
 *
 * Looking a family up (`counter`, `gauge`, `histogram`) is setup: a name that is not a declared
 * custom family, or one declared with another type, throws. Recording never throws: a value the
 * family cannot take (NaN, ±Infinity, a negative counter increment, a non-number), or labels that
 * are not exactly the declared ones (one missing, one undeclared, `model_name` passed, a value
 * that is not a string or number) drop the record with a `diag` warning (labels: once per kind of
 * mistake; values: at most one a minute per family, as the store warns), and create no series
 * (`bind` creates its series at zero, as prometheus_client's `labels()` creates a child). Custom
 * families are not gated by `logStats`.
 */
export class OmniCustomMetrics {
  /** The declared custom families, in config-file order. */
  readonly families: readonly CustomFamily[];
  private readonly handles = new Map<string, CustomFamilyRecorder>();
  /** Keyed by family and kind of mistake: bounded by the declared families. */
  private readonly warnings = new WarnOnce(Infinity);

  /** @internal */
  constructor(
    private readonly store: SeriesStore,
    private readonly modelName: string,
  ) {
    this.families = store.catalog.families.filter((family) => family.group === 'custom');
  }

  /** The counter declared as `name` (exposed name, or the name as written in the config file). */
  counter<L extends string = string>(name: string): CustomCounter<L> {
    return this.lookup(name, 'counter') as CustomCounterRecorder;
  }

  /** The gauge declared as `name` (exposed name, or the name as written in the config file). */
  gauge<L extends string = string>(name: string): CustomGauge<L> {
    return this.lookup(name, 'gauge') as CustomGaugeRecorder;
  }

  /** The histogram declared as `name` (exposed name, or the name as written in the config file). */
  histogram<L extends string = string>(name: string): CustomHistogram<L> {
    return this.lookup(name, 'histogram') as CustomHistogramRecorder;
  }

  private lookup(name: string, type: FamilyType): CustomFamilyRecorder {
    const call = `OmniCustomMetrics.${type}(${JSON.stringify(name)})`;
    const family = this.find(name);
    if (family === undefined) {
      const builtIn = typeof name === 'string' ? this.store.catalog.byName(name) : undefined;
      const why =
        builtIn === undefined ? 'no custom family has that name' : `${builtIn.name} is a catalog family fed by the package's recorders, not a custom family`;
      throw new RangeError(`${call}: ${why}; ${this.declaredText()}`);
    }
    if (family.type !== type) {
      throw new TypeError(`${call}: ${family.name} is declared as a ${family.type}, not a ${type} (use ${family.type}()); ${this.declaredText()}`);
    }
    let handle = this.handles.get(family.name);
    if (handle === undefined) {
      const series = this.store.family(family.key) as FamilySeries;
      handle =
        type === 'counter'
          ? new CustomCounterRecorder(series, this.modelName, this.warnings)
          : type === 'gauge'
            ? new CustomGaugeRecorder(series, this.modelName, this.warnings)
            : new CustomHistogramRecorder(series, this.modelName, this.warnings);
      this.handles.set(family.name, handle);
    }
    return handle;
  }

  private find(name: string): ResolvedFamily | undefined {
    if (typeof name !== 'string') return undefined;
    const family = this.store.catalog.byKey(`custom.${name}`) ?? this.store.catalog.byName(name);
    return family?.group === 'custom' ? family : undefined;
  }

  private declaredText(): string {
    if (this.families.length === 0) return 'declared custom families: none (declare them under "families:" in the configFile)';
    return `declared custom families: ${this.families.map((family) => `${family.name} (${family.type})`).join(', ')}`;
  }
}

/** What a record into a custom family shares, whatever its type: checking labels and values, binding through the store. */
abstract class CustomFamilyRecorder {
  readonly family: ResolvedFamily;
  /** The declared labels a caller passes: every one but `model_name`. */
  private readonly callerLabels: readonly string[];
  private readonly takes: string;

  /** @internal */
  constructor(
    protected readonly series: FamilySeries,
    private readonly modelName: string,
    private readonly warnings: WarnOnce,
  ) {
    this.family = series.family;
    this.callerLabels = this.family.labels.filter((label) => label !== 'model_name');
    const filled = this.family.labels.includes('model_name') ? '; model_name is filled in' : '';
    this.takes = `${this.family.name} takes ${this.callerLabels.length === 0 ? 'no labels' : `labels ${this.callerLabels.join(', ')}`}${filled}`;
  }

  /** Records one value; never throws (the value is checked by type first, the labels read under a guard). */
  protected recordAt(value: number, labels: unknown): void {
    const why = this.valueProblem(value);
    if (why !== undefined) {
      this.series.invalidValues.warn(`${this.family.name}: ${typeof value === 'number' ? String(value) : `a ${typeof value}`} dropped (${why})`);
      return;
    }
    const values = this.readLabels(labels);
    if (values !== undefined) this.series.bind(values).record(value);
  }

  /** The bound series of `labels`, or one that drops every record when the labels are wrong; never throws. */
  protected bindAt(labels: unknown): RebindingSeries | undefined {
    const values = this.readLabels(labels);
    return values === undefined ? undefined : new RebindingSeries(this.series, values);
  }

  /** `valuesOf` of the caller's labels object, whose getters and proxy traps are the caller's code and may throw. */
  private readLabels(labels: unknown): LabelValue[] | undefined {
    try {
      return this.valuesOf(labels);
    } catch (error) {
      this.unexpected(error);
      return undefined;
    }
  }

  /**
   * Values the store would reject are dropped before binding, so a bad value on a new label set
   * creates no series; the store checks what depends on the series (a counter total that would
   * overflow).
   */
  private valueProblem(value: unknown): string | undefined {
    const finite = typeof value === 'number' && value - value === 0;
    if (this.family.type === 'counter') return finite && value >= 0 ? undefined : 'a counter takes finite increments >= 0';
    return finite ? undefined : `a ${this.family.type} takes finite values`;
  }

  /** The label values in the family's label order, or undefined (warned once) when the label set is not the declared one. */
  private valuesOf(labels: unknown): LabelValue[] | undefined {
    const declared = this.family.labels;
    if (labels === undefined || labels === null) {
      if (this.callerLabels.length === 0) return declared.map(() => this.modelName);
      return this.labelProblem('missing', `labels ${this.callerLabels.join(', ')} missing`);
    }
    if (typeof labels !== 'object' || Array.isArray(labels)) {
      return this.labelProblem(
        'not an object',
        `labels must be an object keyed by label name, not ${Array.isArray(labels) ? 'an array' : `a ${typeof labels}`}`,
      );
    }
    const given = labels as Readonly<Record<string, unknown>>;
    const values: LabelValue[] = [];
    for (const name of declared) {
      if (name === 'model_name') {
        values.push(this.modelName);
        continue;
      }
      const value = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : undefined;
      if (typeof value === 'string' || typeof value === 'number') values.push(value);
      else if (value === undefined) return this.labelProblem('missing', `label ${name} missing`);
      else return this.labelProblem('not a string or number', `label ${name} is ${value === null ? 'null' : `a ${typeof value}`}, not a string or number`);
    }
    const keys = Object.keys(given);
    if (keys.length !== this.callerLabels.length) {
      const extra = keys.filter((key) => !this.callerLabels.includes(key));
      if (extra.includes('model_name'))
        return this.labelProblem('model_name', `model_name is filled in by the recorder (${JSON.stringify(this.modelName)}): leave it out`);
      return this.labelProblem('not declared', `${extra.length === 1 ? 'label' : 'labels'} ${shownLabelNames(extra)} not declared`);
    }
    return values;
  }

  /**
   * Warns once per family and `kind` of mistake, whatever the names involved: a caller passing a
   * new undeclared label on every call (a request id as a key) is one line, and leaves the other
   * kinds of mistake their say. `problem` describes the first occurrence.
   */
  private labelProblem(kind: string, problem: string): undefined {
    this.warnings.warn(`${this.family.name}\u0000${kind}`, `${this.family.name}: record dropped, ${problem} (${this.takes}); said once per kind of mistake`);
    return undefined;
  }

  private unexpected(error: unknown): void {
    const why = error instanceof Error ? error.message : typeof error;
    this.warnings.warn(
      `${this.family.name}\u0000unexpected`,
      `${this.family.name}: ${METHOD_OF[this.family.type]} dropped a call it could not record (${why})`,
    );
  }
}

class CustomCounterRecorder extends CustomFamilyRecorder implements CustomCounter {
  add(value: number, labels?: CustomLabels): void {
    this.recordAt(value, labels);
  }

  bind(labels?: CustomLabels): BoundCustomCounter {
    const bound = this.bindAt(labels);
    return bound === undefined ? NOOP_BOUND : { add: (value) => bound.record(value) };
  }
}

class CustomGaugeRecorder extends CustomFamilyRecorder implements CustomGauge {
  set(value: number, labels?: CustomLabels): void {
    this.recordAt(value, labels);
  }

  bind(labels?: CustomLabels): BoundCustomGauge {
    const bound = this.bindAt(labels);
    return bound === undefined ? NOOP_BOUND : { set: (value) => bound.record(value) };
  }
}

class CustomHistogramRecorder extends CustomFamilyRecorder implements CustomHistogram {
  observe(value: number, labels?: CustomLabels): void {
    this.recordAt(value, labels);
  }

  bind(labels?: CustomLabels): BoundCustomHistogram {
    const bound = this.bindAt(labels);
    return bound === undefined ? NOOP_BOUND : { observe: (value) => bound.record(value) };
  }
}

/** Undeclared label names as a warning prints them: a caller's keys may be anything, megabytes or thousands of them included. */
function shownLabelNames(names: readonly string[]): string {
  const shown = names.slice(0, 3).map((name) => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name));
  return names.length > 3 ? `${shown.join(', ')} and ${names.length - 3} more` : shown.join(', ');
}

/** What `bind` returns for labels it dropped: every record is dropped too (the label warning was given once). */
const NOOP_BOUND: BoundCustomCounter & BoundCustomGauge & BoundCustomHistogram = Object.freeze({
  add(): void {},
  set(): void {},
  observe(): void {},
});

/**
 * A series bound once for a caller to keep. When its family loses series (a replica removed),
 * it binds again on its next record, as `SeriesTable` does: a removed series is never recorded
 * into unseen. The series validates the value (and warns) itself.
 */
class RebindingSeries implements BoundSeries {
  private series: BoundSeries;
  private generation: number;

  /** @internal */
  constructor(
    private readonly owner: FamilySeries,
    private readonly values: readonly LabelValue[],
  ) {
    this.series = owner.bind(values);
    this.generation = owner.generation;
  }

  record(value: number): void {
    if (this.owner.generation !== this.generation) {
      this.series = this.owner.bind(this.values);
      this.generation = this.owner.generation;
    }
    this.series.record(value);
  }
}
