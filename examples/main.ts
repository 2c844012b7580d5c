/**
 * The reference pipeline as a service: `npm start` (or `npx tsx examples/main.ts`).
 *
 * Environment: PORT (API, default 8000), METRICS_PORT (default 9464), REPLICAS (thinker,talker,
 * code2wav; default 1,2,1),
 * IMAGE_REPLICAS (the image stage; default 1, 0 serves no images), ADMIN_TOKEN (serves
 * /admin/replicas, the scaling endpoint, behind this bearer token), MODEL (served name), SEED (default 0), PROFILE (realistic | fast).
 * Metrics registration and the INSTRUMENTATION marker live in `reference-pipeline.ts`, so the
 * tests that start the pipeline in-process run exactly what this program runs.
 */
import { DEFAULT_IMAGE_REPLICAS, DEFAULT_REPLICAS, parseImageReplicas, parsePort, parseReplicas, parseSeed } from './pipeline-options';
import { DEFAULT_MODEL_NAME, startReferencePipeline, type ReferencePipelineOptions } from './reference-pipeline';

/** If some handle still holds the process this long after a clean stop, exit anyway. */
const EXIT_WATCHDOG_MS = 3000;

function optionsFromEnv(env: NodeJS.ProcessEnv): ReferencePipelineOptions {
  const profile = env.PROFILE?.trim() || 'realistic';
  if (profile !== 'realistic' && profile !== 'fast') throw new RangeError(`PROFILE must be "realistic" or "fast", got "${profile}"`);
  return {
    port: env.PORT ? parsePort('PORT', env.PORT) : 8000,
    metricsPort: env.METRICS_PORT ? parsePort('METRICS_PORT', env.METRICS_PORT) : 9464,
    replicas: env.REPLICAS ? parseReplicas(env.REPLICAS) : undefined,
    imageReplicas: env.IMAGE_REPLICAS ? parseImageReplicas(env.IMAGE_REPLICAS) : undefined,
    adminToken: env.ADMIN_TOKEN || undefined,
    modelName: env.MODEL?.trim() || DEFAULT_MODEL_NAME,
    seed: env.SEED ? parseSeed(env.SEED) : 0,
    profile,
  };
}

async function main(): Promise<void> {
  let options: ReferencePipelineOptions;
  try {
    options = optionsFromEnv(process.env);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 2;
    return;
  }
  const pipeline = await startReferencePipeline(options);
  console.info(
    [
      `reference pipeline: ${pipeline.modelName}, replicas thinker/talker/code2wav/image = ${[...(options.replicas ?? DEFAULT_REPLICAS), options.imageReplicas ?? DEFAULT_IMAGE_REPLICAS].join('/')}`,
      `  OpenAI API     ${pipeline.apiUrl}/v1   (POST /v1/chat/completions, POST /v1/images/generations, GET /v1/models)`,
      `  metrics        ${pipeline.metricsUrl}`,
      `  metrics (API)  ${pipeline.apiMetricsUrl}`,
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

main().catch((error: unknown) => {
  console.error('error:', error instanceof Error ? error.message : error);
  process.exit(1);
});
