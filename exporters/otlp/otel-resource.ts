import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { OtelEnvConfig } from './otel-env';

export interface ResourceOptions {
  readonly resource?: Resource;
  readonly serviceName?: string;
}

/**
 * The provider's resource, lowest precedence first: the SDK default (`service.name`
 * `unknown_service:…`, `telemetry.sdk.*`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`, the
 * `resource` option, the `serviceName` option.
 */
export function buildResource(env: OtelEnvConfig, options: ResourceOptions = {}): Resource {
  if (options.serviceName !== undefined && (typeof options.serviceName !== 'string' || options.serviceName === '')) {
    throw new TypeError('serviceName must be a non-empty string');
  }
  let resource = defaultResource().merge(resourceFromAttributes(env.resourceAttributes));
  if (options.resource) resource = resource.merge(options.resource);
  if (options.serviceName !== undefined) resource = resource.merge(resourceFromAttributes({ 'service.name': options.serviceName }));
  return resource;
}
