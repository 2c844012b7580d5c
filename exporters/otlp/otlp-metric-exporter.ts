import type { Agent as HttpAgent } from 'node:http';
import { createRequire } from 'node:module';
import type { AggregationTemporalitySelector, PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { OtlpExporterSettings } from './export-settings';
import { RetryAfterGate } from './retry-after';
import type { TemporalityPreference } from './types';

/** The optional dependency behind `grpc`; loaded only when that protocol is asked for. */
export const GRPC_EXPORTER_PACKAGE = '@opentelemetry/exporter-metrics-otlp-grpc';

type GrpcExporterModule = typeof import('@opentelemetry/exporter-metrics-otlp-grpc');
type GrpcConfig = NonNullable<ConstructorParameters<GrpcExporterModule['OTLPMetricExporter']>[0]>;
/** The one function used from the gRPC exporter's base package (a dependency of that package, not ours). */
interface GrpcBaseModule {
  createEmptyMetadata(): NonNullable<GrpcConfig['metadata']>;
}
/**
 * The OTLP/HTTP exporters load when an exporter is built, not when the package loads: a pipeline
 * that only serves `/metrics` never pays for them (they and their transformer are a third of the
 * package's load time).
 */
type JsonExporterModule = typeof import('@opentelemetry/exporter-metrics-otlp-http');
type ProtobufExporterModule = typeof import('@opentelemetry/exporter-metrics-otlp-proto');
const JSON_EXPORTER_PACKAGE = '@opentelemetry/exporter-metrics-otlp-http';
const PROTOBUF_EXPORTER_PACKAGE = '@opentelemetry/exporter-metrics-otlp-proto';
type HttpConfig = NonNullable<ConstructorParameters<JsonExporterModule['OTLPMetricExporter']>[0]>;

/** How modules are loaded; tests swap it to simulate a missing optional dependency. */
export type ModuleLoader = (id: string) => unknown;

/** The exporters' own temporality selectors, for exporters that take a selector (console). */
export function temporalitySelector(preference: TemporalityPreference): AggregationTemporalitySelector {
  const otlp = defaultLoader(JSON_EXPORTER_PACKAGE) as JsonExporterModule;
  return preference === 'delta'
    ? otlp.DeltaTemporalitySelector
    : preference === 'lowmemory'
      ? otlp.LowMemoryTemporalitySelector
      : otlp.CumulativeTemporalitySelector;
}

/**
 * The OpenTelemetry JS OTLP metric exporter for the protocol, configured with the settled values
 * (anything left `undefined` falls back to the exporter's own environment reading and defaults).
 * Over HTTP, a collector's `Retry-After` is honoured across exports (`RetryAfterGate`); gRPC
 * collectors signal back-off otherwise and are left to the gRPC exporter.
 */
export function createOtlpMetricExporter(settings: OtlpExporterSettings, load: ModuleLoader = defaultLoader): PushMetricExporter {
  const { AggregationTemporalityPreference } = defaultLoader(JSON_EXPORTER_PACKAGE) as JsonExporterModule;
  const shared = {
    url: settings.url,
    timeoutMillis: settings.timeoutMillis,
    compression: settings.compression as HttpConfig['compression'],
    temporalityPreference:
      settings.temporality === 'delta'
        ? AggregationTemporalityPreference.DELTA
        : settings.temporality === 'lowmemory'
          ? AggregationTemporalityPreference.LOWMEMORY
          : AggregationTemporalityPreference.CUMULATIVE,
  };
  switch (settings.protocol) {
    case 'http/protobuf': {
      const gate = new RetryAfterGate(settings.temporality);
      const agent = new OwnedAgent(gate);
      const headers = settings.headers ? { ...settings.headers } : undefined;
      const { OTLPMetricExporter } = defaultLoader(PROTOBUF_EXPORTER_PACKAGE) as ProtobufExporterModule;
      return gate.gate(agent.closedWith(new OTLPMetricExporter({ ...shared, headers, httpAgentOptions: agent.factory })));
    }
    case 'http/json': {
      const gate = new RetryAfterGate(settings.temporality);
      const agent = new OwnedAgent(gate);
      const headers = settings.headers ? { ...settings.headers } : undefined;
      const { OTLPMetricExporter } = defaultLoader(JSON_EXPORTER_PACKAGE) as JsonExporterModule;
      return gate.gate(agent.closedWith(new OTLPMetricExporter({ ...shared, headers, httpAgentOptions: agent.factory })));
    }
    case 'grpc': {
      const { OTLPMetricExporter } = loadGrpc<GrpcExporterModule>(load, GRPC_EXPORTER_PACKAGE);
      const config: GrpcConfig = { ...shared, compression: settings.compression as GrpcConfig['compression'] };
      if (settings.headers) config.metadata = grpcMetadata(load, settings.headers);
      return new OTLPMetricExporter(config);
    }
  }
}

/**
 * The keep-alive agent of one OTLP/HTTP exporter, made here through the exporter's public agent
 * factory so that shutting the exporter down can close it: the exporter's own shutdown() leaves its
 * agent's idle socket to the collector open. `node:http` / `node:https` load on the first export,
 * not at import, so that `@opentelemetry/instrumentation-http` can patch them first.
 */
class OwnedAgent {
  private agent: Promise<HttpAgent> | undefined;

  /** `gate` is told the collector's answer to every request. */
  constructor(private readonly gate: RetryAfterGate) {}

  /** One agent per exporter, even when its first two exports start together. */
  readonly factory = (protocol: string): Promise<HttpAgent> => {
    this.agent ??= (protocol === 'http:' ? import('node:http') : import('node:https')).then(({ Agent }) => this.gate.observe(new Agent({ keepAlive: true })));
    return this.agent;
  };

  /** `exporter`, whose shutdown() also destroys this agent once the exporter has shut down. */
  closedWith<T extends PushMetricExporter>(exporter: T): T {
    const shutdown = exporter.shutdown.bind(exporter);
    exporter.shutdown = async () => {
      try {
        await shutdown();
      } finally {
        (await this.agent)?.destroy();
      }
    };
    return exporter;
  }
}

function loadGrpc<T>(load: ModuleLoader, id: string): T {
  try {
    return load(id) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException | undefined)?.code === 'MODULE_NOT_FOUND') {
      throw new Error(
        `OTLP protocol grpc needs the optional dependency ${GRPC_EXPORTER_PACKAGE}, which is not installed: ` +
          `npm install ${GRPC_EXPORTER_PACKAGE}@^0.223.0 (or use http/protobuf)`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** Headers as gRPC metadata, built with the gRPC exporter's own `@grpc/grpc-js`. */
function grpcMetadata(load: ModuleLoader, headers: Readonly<Record<string, string>>): NonNullable<GrpcConfig['metadata']> {
  const { createEmptyMetadata } = loadGrpc<GrpcBaseModule>(load, '@opentelemetry/otlp-grpc-exporter-base');
  const metadata = createEmptyMetadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
  return metadata;
}

/**
 * `require` (the exporters load when first used), except that the gRPC exporter's base package is resolved from the gRPC exporter
 * (it is that package's dependency, not ours, so it may not be hoisted next to us).
 */
function defaultLoader(id: string): unknown {
  if (id === '@opentelemetry/otlp-grpc-exporter-base') return createRequire(require.resolve(GRPC_EXPORTER_PACKAGE))(id);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loads a dependency by id when first used, which an import cannot
  return require(id);
}
