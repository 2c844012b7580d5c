import assert from 'node:assert/strict';
import { serveClusterWorker } from '../../exporters/cluster/cluster-worker';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import type { RequestLabelOptions } from '../../instrumentation/recorders/request-labels';
import { OmniOptionError } from '../../views/common/option-checks';
import { withoutIpcChannel } from '../support/ipc-channel';
import type { OmniMetricsOptions } from '../../options';

async function worker(requestLabels?: readonly RequestLabelOptions[], more: Partial<OmniMetricsOptions> = {}): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({
    modelName: 'm',
    logStats: true,
    prometheus: false,
    logIntervalSeconds: 0,
    processMetrics: false,
    selfCheck: false,
    exemplars: false,
    requestLabels,
    ...more,
  });
}

describe('node:cluster workers: what they refuse and say at startup', () => {
  it('a worker bounded by maxValues (first values seen, per process) is refused, naming the label and the allow-list', async () => {
    const handle = await worker([
      { name: 'priority', header: 'x-priority', values: ['high', 'low'] },
      { name: 'tenant', from: (request) => request.tenant, values: ['alpha'], maxValues: 2 },
    ]);
    try {
      assert.throws(
        () => serveClusterWorker(handle),
        (error: unknown) =>
          error instanceof OmniOptionError &&
          error.option === 'requestLabels[1].maxValues' &&
          error.message ===
            'omni-otel-metrics: requestLabels[1].maxValues ("tenant") cannot bound a node:cluster worker: each worker would admit its own first values, and the primary\'s sum would misattribute them. List the values in requestLabels[1].values instead, the same in every worker',
      );
    } finally {
      await handle.shutdown();
    }
  });

  it('an allow-list, the same in every worker, passes the check (here the missing IPC channel is the next refusal)', async () => {
    const handle = await worker([{ name: 'tenant', from: (request) => request.tenant, values: ['alpha', 'bravo'] }]);
    try {
      assert.throws(() => withoutIpcChannel(() => serveClusterWorker(handle)), /must run in a worker started by cluster\.fork\(\)/);
    } finally {
      await handle.shutdown();
    }
  });
});
