import { hrTime } from '@opentelemetry/core';
import type { CollectionResult } from '@opentelemetry/sdk-metrics';
import { OmniMetricProducer, type MetricProducerOptions } from '../../views/store/metric-producer';
import type { FamilySeries } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import type { EnginePuller, PulledEngines } from './engine-puller';
import { DeltaConverter, mergePulled } from './merge-pulled';

/**
 * The store's producer with the pulled engines folded in (see `mergePulled`): what every reader
 * of a pipeline with `enginePull` is given, so `/metrics`, OTLP and readers of your own see the
 * same families. A collection waits for the engines at most their pull timeout (or not at all
 * with `intervalMillis`).
 */
export class EnginePullProducer extends OmniMetricProducer {
  private pulledStore: SeriesStore | undefined;
  private readonly delta: DeltaConverter | undefined;

  constructor(
    private readonly puller: EnginePuller,
    options: MetricProducerOptions = {},
  ) {
    super(options);
    this.pulledStore = options.store;
    this.delta = options.aggregationTemporalitySelector ? new DeltaConverter(options.aggregationTemporalitySelector) : undefined;
  }

  /**
   * Pulled engines' histograms have classic buckets only, and one family's points share one type:
   * the families an engine prints too (vLLM's own, `vllm:*` but not the pipeline's) stay classic.
   */
  protected override exponentialFor(family: FamilySeries): boolean {
    return !printedByEngines(family);
  }

  override attach(store: SeriesStore): void {
    super.attach(store);
    this.pulledStore = store;
  }

  /** The latest pull, for a renderer that prints its lines itself (the Prometheus reader). */
  pulled(): Promise<PulledEngines> {
    return this.puller.latest();
  }

  override async collect(): Promise<CollectionResult> {
    const [own, pulled] = await Promise.all([super.collect(), this.puller.latest()]);
    this.delta?.begin();
    const merged = mergePulled(own, pulled, this.pulledStore, this.delta);
    this.delta?.end(hrTime());
    return merged;
  }
}

/** A family vLLM's engines print too (vLLM's own `vllm:*`), whose pulled series may join the store's. */
export function printedByEngines(family: FamilySeries): boolean {
  return family.family.key.startsWith('upstream.');
}
