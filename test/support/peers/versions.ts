/**
 * The real peers the tests run against, pinned: each is built from its published module (Go
 * module proxy, PyPI) into a cache folder keyed by these versions, never downloaded prebuilt.
 */

/** Prometheus 3.16, whose Go module is numbered v0.316.0; `promtool` comes from the same module. */
export const PROMETHEUS_MODULE = 'github.com/prometheus/prometheus';
export const PROMETHEUS_MODULE_VERSION = 'v0.316.0';
/**
 * Leaves out the service-discovery plugins (cloud providers, Kubernetes, ...): the tests use static
 * targets only, and the build is several minutes shorter without them.
 */
export const PROMETHEUS_BUILD_TAGS = 'remove_all_sd';

/** The newest prometheus_client on PyPI: the library a current vLLM prints `/metrics` with. */
export const PROMETHEUS_CLIENT_VERSION = '0.26.0';
