import { difference, sameSamples } from '../direct-path/same-samples';
import { setupPerRequest } from '../per-request-setup';
import { contenderMain } from './contender-main';

/**
 * Not timed: one request through the package's hooks, the floor and prom-client, and the samples
 * each added compared, so the floor is known to record what the package records.
 */
contenderMain(async () => {
  const held = new Map<string, Map<string, number>>();
  for (const contender of ['ours', 'floor', 'prom-client'] as const) {
    const setup = await setupPerRequest(contender);
    const before = await setup.samples();
    await setup.run();
    held.set(contender, difference(await setup.samples(), before));
    await setup.close();
  }
  const ours = held.get('ours') ?? new Map<string, number>();
  return {
    floor: sameSamples(ours, held.get('floor') ?? new Map()),
    promClient: sameSamples(ours, held.get('prom-client') ?? new Map()),
  };
});
