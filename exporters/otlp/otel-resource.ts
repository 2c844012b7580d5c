import { randomUUID } from 'node:crypto';
import { defaultResource, detectResources, hostDetector, osDetector, processDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { OtelEnvConfig } from './otel-env';

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

/**
 * The provider's resource, lowest precedence first: the SDK default (`service.name`
 * `unknown_service:…`, `telemetry.sdk.*`); what OpenTelemetry's host, OS and process detectors
 * find (`host.name`, `host.arch`, `host.id`, `os.*`, `process.*`) and `service.instance.id`;
 * `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_SERVICE_NAME`; the `resource` option; the `serviceName` option.
 * `host.id` is read asynchronously: wait for `waitForAsyncAttributes()` before reading attributes.
 */
export function buildResource(env: OtelEnvConfig, options: ResourceOptions = {}): Resource {
  if (options.serviceName !== undefined && (typeof options.serviceName !== 'string' || options.serviceName === '')) {
    throw new TypeError('serviceName must be a non-empty string');
  }
  let resource = defaultResource()
    .merge(detectResources({ detectors: [hostDetector, osDetector, processDetector] }))
    .merge(resourceFromAttributes({ 'service.instance.id': serviceInstanceId() }))
    .merge(resourceFromAttributes(env.resourceAttributes));
  if (options.resource) resource = resource.merge(options.resource);
  if (options.serviceName !== undefined) resource = resource.merge(resourceFromAttributes({ 'service.name': options.serviceName }));
  return resource;
}
