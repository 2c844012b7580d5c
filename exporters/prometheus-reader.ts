import { diag } from '@opentelemetry/api';
import { MetricReader } from '@opentelemetry/sdk-metrics';
import { serializePrometheus, type DeclaredFamily, type ExpositionFormat } from './prometheus-serializer';

export interface OmniPrometheusReaderOptions {
  /** Families announced even before they have samples; `registerOmniMetrics` fills this in. */
  readonly declaredFamilies?: readonly DeclaredFamily[];
  readonly withTargetInfo?: boolean;
  readonly withScopeLabels?: boolean;
}

/**
 * A pull `MetricReader` whose output is vLLM's `/metrics` byte shape. It collects on demand
 * (cumulative temporality, the reader default) and hands the result to the pure serializer;
 * serving it over HTTP is `prometheus-http.ts`'s job.
 */
export class OmniPrometheusReader extends MetricReader {
  private declared: readonly DeclaredFamily[];

  constructor(private readonly options: OmniPrometheusReaderOptions = {}) {
    super();
    this.declared = options.declaredFamilies ?? [];
  }

  /** Replaces the announced families (called once the catalog for this configuration is settled). */
  declareFamilies(families: readonly DeclaredFamily[]): void {
    this.declared = families;
  }

  /** The exact text a scrape would receive. */
  async metricsText(format: ExpositionFormat = 'text'): Promise<string> {
    const { resourceMetrics, errors } = await this.collect();
    for (const error of errors) diag.warn('omni-otel-metrics: error while collecting metrics', error);
    return serializePrometheus(resourceMetrics, this.declared, {
      format,
      withTargetInfo: this.options.withTargetInfo,
      withScopeLabels: this.options.withScopeLabels,
    });
  }

  protected override async onForceFlush(): Promise<void> {
    // Pull reader: nothing is buffered.
  }

  protected override async onShutdown(): Promise<void> {
    // The HTTP side owns its server and closes it itself.
  }
}
