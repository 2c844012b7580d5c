import type { ReplicaListing } from '../server/admin-replicas';

/** One scaling step of a load run: at `atSeconds`, add a replica to `stage` or drain its newest one. */
export interface ScaleStep {
  readonly atSeconds: number;
  readonly stage: number;
  readonly change: 'add' | 'drain';
}

/** What a scaling step did, as the admin endpoint answered. */
export interface ScaleEvent extends ScaleStep {
  /** Seconds after the run started. */
  readonly doneAtSeconds: number;
  readonly replica?: number;
  readonly error?: string;
}

/** Parses `1+1@5,1-1@15`: stage 1 gains a replica 5 s in, and drains one 15 s in. */
export function parseScaleSchedule(text: string, flag = '--scale'): ScaleStep[] {
  return text.split(',').map((part) => {
    const match = /^(\d+)([+-])1@(\d+(?:\.\d+)?)$/.exec(part.trim());
    if (match === null) throw new RangeError(`${flag} takes steps like "1+1@5,1-1@15" (stage, +1 or -1, at seconds); got "${part}"`);
    return { stage: Number(match[1]), change: match[2] === '+' ? 'add' : 'drain', atSeconds: Number(match[3]) };
  });
}

/**
 * Runs the steps against the reference pipeline's `/admin/replicas` while a load run goes on. A
 * step that fails is reported, never thrown: the load run goes on. `finish()` drops the steps not
 * yet due, waits for those under way, and returns what each step that ran did.
 */
export function runScaleSchedule(steps: readonly ScaleStep[], adminUrl: string, token: string, startedAt: number): { finish(): Promise<ScaleEvent[]> } {
  const elapsed = (): number => (performance.now() - startedAt) / 1000;
  const running: Array<Promise<ScaleEvent>> = [];
  const timers = steps.map((step) =>
    setTimeout(
      () => {
        running.push(
          applyStep(step, adminUrl, token).then(
            (replica): ScaleEvent => ({ ...step, replica, doneAtSeconds: elapsed() }),
            (error: unknown): ScaleEvent => ({ ...step, error: error instanceof Error ? error.message : String(error), doneAtSeconds: elapsed() }),
          ),
        );
      },
      Math.max(0, step.atSeconds * 1000 - (performance.now() - startedAt)),
    ),
  );
  return {
    finish: async () => {
      timers.forEach(clearTimeout);
      return Promise.all(running);
    },
  };
}

async function applyStep(step: ScaleStep, adminUrl: string, token: string): Promise<number> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (step.change === 'add') {
    const added = (await call(adminUrl, { method: 'POST', headers, body: JSON.stringify({ stage: step.stage }) })) as { replica: number };
    return added.replica;
  }
  const listing = (await call(adminUrl, { headers })) as ReplicaListing;
  const stage = listing.stages.find((s) => s.stage === step.stage);
  const newest = stage?.replicas.filter((id) => !stage.draining.includes(id)).at(-1);
  if (newest === undefined) throw new Error(`stage ${step.stage} has no replica to drain`);
  await call(`${adminUrl}/${step.stage}/${newest}`, { method: 'DELETE', headers });
  return newest;
}

async function call(url: string, init: RequestInit): Promise<unknown> {
  const response = await fetch(url, init);
  const body = (await response.json()) as { error?: { message?: string } };
  if (!response.ok) throw new Error(`${response.status} ${body.error?.message ?? ''}`.trim());
  return body;
}
