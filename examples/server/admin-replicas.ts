import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Orchestrator } from '../pipeline/orchestrator';
import { STAGE_NAMES } from '../pipeline/pipeline-types';
import { HttpError } from './http-error';
import { readJsonBody, sendJson } from './http-json';
import { invalid, isRecord } from './request-fields';

export interface AdminOptions {
  readonly orchestrator: Orchestrator;
  /** The bearer token every admin request must carry. */
  readonly token: string;
}

/** What `GET /admin/replicas` answers: each stage's replica ids, and those being drained. */
export interface ReplicaListing {
  readonly stages: ReadonlyArray<{ readonly stage: number; readonly name: string; readonly replicas: readonly number[]; readonly draining: readonly number[] }>;
}

export const ADMIN_REPLICAS_PATH = '/admin/replicas';

/**
 * The stage pools' scaling endpoint, as an autoscaler or an operator drives it:
 * - `GET /admin/replicas` lists every stage's replicas;
 * - `POST /admin/replicas` with `{"stage": 1}` adds a replica to stage 1 (201, its id);
 * - `DELETE /admin/replicas/1/2` drains replica 2 of stage 1: it takes no new request and leaves
 *   once its requests are done (202); `?now=true` removes it at once, failing what still runs on it.
 * Every request needs `Authorization: Bearer <token>`.
 */
export async function handleAdminReplicas(request: IncomingMessage, response: ServerResponse, pathname: string, options: AdminOptions): Promise<void> {
  if (!authorized(request.headers.authorization, options.token)) {
    response.setHeader('WWW-Authenticate', 'Bearer');
    throw new HttpError(401, 'admin requests need Authorization: Bearer <token>', 'authentication_error');
  }
  const orchestrator = options.orchestrator;
  const parts = pathname
    .slice(ADMIN_REPLICAS_PATH.length)
    .split('/')
    .filter((part) => part !== '');
  if (parts.length === 0 && request.method === 'GET') return sendJson(response, 200, listReplicas(orchestrator));
  if (parts.length === 0 && request.method === 'POST') {
    const body = await readJsonBody(request);
    const stage = stageOf(isRecord(body) ? body.stage : undefined, orchestrator);
    return sendJson(response, 201, { stage, replica: orchestrator.addReplica(stage) });
  }
  if (parts.length === 2 && request.method === 'DELETE') {
    const stage = stageOf(Number(parts[0]), orchestrator);
    const replica = Number(parts[1]);
    if (!orchestrator.stagePools[stage]?.replicaIds().includes(replica)) throw new HttpError(404, `stage ${stage} has no replica ${parts[1]}`, 'NotFoundError');
    if (new URL(request.url ?? '/', 'http://localhost').searchParams.get('now') === 'true') {
      orchestrator.removeReplica(stage, replica);
      return sendJson(response, 200, { stage, replica, removed: true });
    }
    if (!orchestrator.drainReplica(stage, replica))
      throw new HttpError(409, `replica ${replica} of stage ${stage} is draining already or the last one taking requests`, 'conflict');
    return sendJson(response, 202, { stage, replica, draining: true });
  }
  const allowed = parts.length === 0 ? 'GET, POST' : 'DELETE';
  response.setHeader('Allow', allowed);
  throw new HttpError(405, `Method not allowed; use ${allowed}`);
}

export function listReplicas(orchestrator: Orchestrator): ReplicaListing {
  return {
    stages: orchestrator.stagePools.map((pool) => ({
      stage: pool.stageId,
      name: STAGE_NAMES[pool.stageId] ?? String(pool.stageId),
      replicas: pool.replicaIds(),
      draining: pool.drainingIds(),
    })),
  };
}

function stageOf(value: unknown, orchestrator: Orchestrator): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || orchestrator.stagePools[value] === undefined) {
    throw invalid(`stage must be one of ${orchestrator.stagePools.map((pool) => pool.stageId).join(', ')}`, 'stage');
  }
  return value;
}

/** Compares digests, so the time taken says nothing about the token. */
function authorized(header: string | undefined, token: string): boolean {
  const presented = /^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '';
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(presented), digest(token));
}
