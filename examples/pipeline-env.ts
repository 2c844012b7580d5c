import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { DEFAULT_HOST, DEFAULT_MODEL_NAME, type ReferencePipelineOptions } from './reference-pipeline';
import { parseImageReplicas, parsePort, parseReplicas, parseSeed } from './pipeline-options';
import { SLO_VARIABLES, sloFromEnv } from './slo-env';
import { warnOnExportFailure } from './span-export-failures';

/** The variables `npm start` reads, with their defaults: printed by the docs, checked by the tests. */
export const PIPELINE_VARIABLES = {
  HOST: `API listen address (default ${DEFAULT_HOST}, loopback; 0.0.0.0 serves every interface, without authentication)`,
  PORT: 'API port (default 8000; 0 picks a free one)',
  OTEL_EXPORTER_PROMETHEUS_HOST: '/metrics server address (default: HOST)',
  OTEL_EXPORTER_PROMETHEUS_PORT: '/metrics server port (default 9464; 0 picks a free one); METRICS_PORT is an alias',
  REPLICAS: 'thinker,talker,code2wav replicas (default 1,2,1)',
  IMAGE_REPLICAS: 'image stage replicas (default 1; 0 serves no images)',
  ADMIN_TOKEN: 'serves /admin/replicas (scale stages while serving) behind this bearer token (default: not served)',
  MODEL: `served model name (default ${DEFAULT_MODEL_NAME})`,
  SEED: 'seeds every replica (default 0)',
  PROFILE: 'realistic (default) or fast',
  TRACING:
    '1 traces every API request (server spans, traceparent honoured) and exports them over OTLP/HTTP (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, default http://localhost:4318/v1/traces; a failing export is warned about); exemplars follow. Default 0',
  NATIVE_HISTOGRAMS:
    '1 keeps native (exponential) buckets on every histogram family: in the Prometheus protobuf exposition and over OTLP; the text formats keep the classic ones. Default 0',
  ...Object.fromEntries(Object.entries(SLO_VARIABLES).map(([variable, [key, what]]) => [variable, `the slo option's ${key}: ${what}; unset declares none`])),
} as const;

/** Where the OTLP/HTTP trace exporter sends spans, read as it reads the environment. */
export function traceEndpointFromEnv(env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || 'http://localhost:4318';
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** The reference pipeline's options from the environment; throws naming the variable that is wrong. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): ReferencePipelineOptions {
  const profile = env.PROFILE?.trim() || 'realistic';
  if (profile !== 'realistic' && profile !== 'fast') throw new RangeError(`PROFILE must be "realistic" or "fast"; got "${profile}"`);
  const host = env.HOST?.trim() || DEFAULT_HOST;
  return {
    host,
    port: env.PORT?.trim() ? parsePort('PORT', env.PORT) : 8000,
    metricsHost: env.OTEL_EXPORTER_PROMETHEUS_HOST?.trim() || host,
    metricsPort: metricsPortFromEnv(env),
    replicas: env.REPLICAS ? parseReplicas(env.REPLICAS) : undefined,
    imageReplicas: env.IMAGE_REPLICAS ? parseImageReplicas(env.IMAGE_REPLICAS) : undefined,
    adminToken: env.ADMIN_TOKEN || undefined,
    modelName: env.MODEL?.trim() || DEFAULT_MODEL_NAME,
    seed: env.SEED ? parseSeed(env.SEED) : 0,
    profile,
    tracing: flagFromEnv('TRACING', env.TRACING) ? { exporter: warnOnExportFailure(new OTLPTraceExporter(), traceEndpointFromEnv(env)) } : undefined,
    nativeHistograms: flagFromEnv('NATIVE_HISTOGRAMS', env.NATIVE_HISTOGRAMS) || undefined,
    slo: sloFromEnv(env),
  };
}

function flagFromEnv(variable: string, text: string | undefined): boolean {
  const value = text?.trim() ?? '';
  if (value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new RangeError(`${variable} must be 1 or 0; got "${text ?? ''}"`);
}

/** OpenTelemetry's `OTEL_EXPORTER_PROMETHEUS_PORT`, or its older alias `METRICS_PORT`; both set and different is refused. */
function metricsPortFromEnv(env: NodeJS.ProcessEnv): number {
  const otel = env.OTEL_EXPORTER_PROMETHEUS_PORT?.trim() ? parsePort('OTEL_EXPORTER_PROMETHEUS_PORT', env.OTEL_EXPORTER_PROMETHEUS_PORT) : undefined;
  const alias = env.METRICS_PORT?.trim() ? parsePort('METRICS_PORT', env.METRICS_PORT) : undefined;
  if (otel !== undefined && alias !== undefined && otel !== alias) {
    throw new RangeError(`OTEL_EXPORTER_PROMETHEUS_PORT (${otel}) and METRICS_PORT (${alias}) disagree; set one of them`);
  }
  return otel ?? alias ?? 9464;
}
