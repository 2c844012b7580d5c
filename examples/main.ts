/**
 * The reference pipeline as a service: `npm start` (or `npx tsx examples/main.ts`), on loopback
 * unless HOST says otherwise. Its environment variables are listed in `pipeline-env.ts`
 * (HOST, PORT, OTEL_EXPORTER_PROMETHEUS_HOST / _PORT, REPLICAS, IMAGE_REPLICAS, ADMIN_TOKEN, MODEL,
 * SEED, PROFILE, TRACING, NATIVE_HISTOGRAMS, SLO_*).
 * Metrics registration and the INSTRUMENTATION marker live in `reference-pipeline.ts`, so the
 * tests that start the pipeline in-process run exactly what this program runs.
 */
import { optionsFromEnv, traceEndpointFromEnv } from './pipeline-env';
import { DEFAULT_IMAGE_REPLICAS, DEFAULT_REPLICAS } from './pipeline-options';
import { startReferencePipeline, type ReferencePipelineOptions } from './reference-pipeline';
import { describeSlo } from './slo-env';

/** If some handle still holds the process this long after a clean stop, exit anyway. */
const EXIT_WATCHDOG_MS = 3000;

async function main(): Promise<void> {
  let options: ReferencePipelineOptions;
  try {
    options = optionsFromEnv(process.env);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 2;
    return;
  }
  let pipeline: Awaited<ReturnType<typeof startReferencePipeline>>;
  try {
    pipeline = await startReferencePipeline(options);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 1;
    return;
  }
  console.info(
    [
      `reference pipeline: ${pipeline.modelName}, replicas thinker/talker/code2wav/image = ${[...(options.replicas ?? DEFAULT_REPLICAS), options.imageReplicas ?? DEFAULT_IMAGE_REPLICAS].join('/')}`,
      `  listening      API on ${listening(pipeline.apiAddress)}${pipeline.metricsAddress ? `, /metrics on ${listening(pipeline.metricsAddress)}` : ''} (no authentication; HOST and PORT move them)`,
      `  OpenAI API     ${pipeline.apiUrl}/v1   (POST /v1/chat/completions, POST /v1/images/generations, GET /v1/models)`,
      `  metrics        ${pipeline.metricsUrl}`,
      `  metrics (API)  ${pipeline.apiMetricsUrl}`,
      ...(options.tracing
        ? [`  tracing        server spans over OTLP/HTTP to ${traceEndpointFromEnv(process.env)} (a failing export is warned about); exemplars on`]
        : []),
      ...(options.nativeHistograms ? ['  native         native buckets on every histogram (Prometheus protobuf scrapes, OTLP)'] : []),
      ...(options.slo ? [`  objectives     ${describeSlo(options.slo)} (vllm:omni_requests_good_total, vllm:omni_slo_misses_total)`] : []),
      ...(options.adminToken ? [`  scaling        ${pipeline.apiUrl}/admin/replicas   (GET; POST {"stage": 1}; DELETE /admin/replicas/1/0)`] : []),
      `  load           npm run load -- --requests 200 --concurrency 16 --base-url ${pipeline.apiUrl}/v1`,
      'Ctrl-C stops.',
    ].join('\n'),
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      console.error(`${signal} again: exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    console.info(`${signal}: stopping (in-flight requests are ended)...`);
    pipeline.stop().then(
      () => {
        console.info('stopped');
        process.exitCode = 0;
        setTimeout(() => {
          console.error(`still alive ${EXIT_WATCHDOG_MS} ms after stop: ${process.getActiveResourcesInfo().join(', ')}; exiting`);
          process.exit(0);
        }, EXIT_WATCHDOG_MS).unref();
      },
      (error: unknown) => {
        console.error('shutdown failed:', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** `0.0.0.0:8000 (every interface)`: a wildcard bind said for what it is. */
function listening(address: string): string {
  return /^(0\.0\.0\.0|\[::\]):/.test(address) ? `${address} (every interface)` : address;
}

main().catch((error: unknown) => {
  console.error('error:', error instanceof Error ? error.message : error);
  process.exit(1);
});
