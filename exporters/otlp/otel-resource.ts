import { randomUUID } from 'node:crypto';
import {
  defaultResource,
  detectResources,
  hostDetector,
  osDetector,
  processDetector,
  resourceFromAttributes,
  type Resource,
  type ResourceDetector,
} from '@opentelemetry/resources';
import { WarnOnce } from '../../views/common/diag-warnings';
import type { OtelEnvConfig } from './otel-env';
import { RESOURCE_DETECTOR_NAMES, type ResourceDetectorName } from './types';

export interface ResourceOptions {
  readonly resource?: Resource;
  readonly serviceName?: string;
}

let processInstanceId: string | undefined;

/**
 * This process's `service.instance.id`: a random UUID made once per process, as the semantic
 * conventions recommend, so that two processes (two hosts, or two on one host) pushing the same
 * families stay two series sets, and every registration in one process shares it.
 */
export function serviceInstanceId(): string {
  processInstanceId ??= randomUUID();
  return processInstanceId;
}

/** The platform detectors, by the names `OTEL_NODE_RESOURCE_DETECTORS` gives them. */
const PLATFORM_DETECTORS: ReadonlyArray<[ResourceDetectorName, ResourceDetector]> = [
  ['host', hostDetector],
  ['os', osDetector],
  ['process', processDetector],
];

const unknownDetectors = new WarnOnce();

/**
 * The provider's resource, lowest precedence first: the SDK default (`service.name`
 * `unknown_service:…`, `telemetry.sdk.*`); what OpenTelemetry's host, OS and process detectors
 * find (`host.name`, `host.arch`, `host.id`, `os.*`, `process.*`) and `service.instance.id`;
 * `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_SERVICE_NAME`; the `resource` option; the `serviceName` option.
 * `OTEL_NODE_RESOURCE_DETECTORS` chooses among the detected parts as NodeSDK does (`env` being the
 * two variables, `serviceinstance` the id); unset, all of them. The options always apply.
 * `host.id` is read asynchronously: wait for `waitForAsyncAttributes()` before reading attributes.
 */
export function buildResource(env: OtelEnvConfig, options: ResourceOptions = {}): Resource {
  if (options.serviceName !== undefined && (typeof options.serviceName !== 'string' || options.serviceName === '')) {
    throw new TypeError('serviceName must be a non-empty string');
  }
  const selected = new Set(env.resourceDetectors?.names ?? RESOURCE_DETECTOR_NAMES);
  for (const name of env.resourceDetectors?.unknown ?? []) {
    unknownDetectors.warn(
      name,
      `OTEL_NODE_RESOURCE_DETECTORS names "${name}", which is none of ${RESOURCE_DETECTOR_NAMES.join(', ')}, all, none: ignored for the resource of the provider this package creates`,
    );
  }
  let resource = defaultResource();
  const detectors = PLATFORM_DETECTORS.filter(([name]) => selected.has(name)).map(([, detector]) => detector);
  if (detectors.length > 0) resource = resource.merge(detectResources({ detectors }));
  if (selected.has('serviceinstance')) resource = resource.merge(resourceFromAttributes({ 'service.instance.id': serviceInstanceId() }));
  if (selected.has('env')) resource = resource.merge(resourceFromAttributes(env.resourceAttributes));
  if (options.resource) resource = resource.merge(options.resource);
  if (options.serviceName !== undefined) resource = resource.merge(resourceFromAttributes({ 'service.name': options.serviceName }));
  return resource;
}
