import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import type { OmniMetricsOptions } from '../../options';

/**
 * A handle that serves nothing, exports nothing and prints nothing on its own (no `/metrics`
 * server, no exporters, no periodic log lines, no self-check, no process families): what a test
 * of the hooks needs. `options` adds to or overrides these.
 */
export function quietHandle(options: Partial<OmniMetricsOptions> = {}): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({
    modelName: 'm',
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    selfCheck: false,
    processMetrics: false,
    ...options,
  });
}
