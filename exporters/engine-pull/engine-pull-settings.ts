import { METRIC_NAME_PATTERN } from '../../views/catalog/names';
import { checkObject, optionKeys, shown } from '../../views/common/option-checks';
import { redactedUrl, redactedUrlText } from '../../views/common/redaction';
import { replicaKey } from '../../views/stage-replica-map';
import type { EnginePullOptions, EngineTarget } from './types';

export const DEFAULT_ENGINE_TIMEOUT_MILLIS = 2000;
export const DEFAULT_ENGINE_CACHE_MILLIS = 1000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export interface ResolvedEngineTarget {
  readonly stage: number;
  readonly replica: number;
  readonly url: URL;
  readonly engine: string;
}

export interface EnginePullSettings {
  readonly targets: readonly ResolvedEngineTarget[];
  readonly timeoutMillis: number;
  readonly cacheMillis: number;
  readonly intervalMillis: number;
  readonly passThrough: ReadonlySet<string>;
  readonly maxResponseBytes: number;
}

const ENGINE_PULL_OPTION_KEYS = optionKeys<EnginePullOptions>({
  engines: true,
  timeoutMillis: true,
  cacheMillis: true,
  intervalMillis: true,
  passThrough: true,
  maxResponseBytes: true,
});
const ENGINE_TARGET_KEYS = optionKeys<EngineTarget>({ stage: true, replica: true, url: true, engine: true });

/**
 * Checks `enginePull` against the topology at start (`replicasPerStage`) and settles its
 * defaults. Throws a `TypeError` / `RangeError` naming the option on anything wrong, before
 * anything is started.
 */
export function resolveEnginePullSettings(options: EnginePullOptions, replicasPerStage: readonly number[], optionName = 'enginePull'): EnginePullSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${optionName} must be an object with an engines list`);
  checkObject(options, optionName, ENGINE_PULL_OPTION_KEYS);
  if (!Array.isArray(options.engines) || options.engines.length === 0) {
    throw new TypeError(`${optionName}.engines must list at least one { stage, replica, url } target`);
  }
  const seenReplicas = new Set<string>();
  const seenEngines = new Set<string>();
  const targets = options.engines.map((target, i): ResolvedEngineTarget => {
    const where = `${optionName}.engines[${i}]`;
    if (typeof target !== 'object' || target === null) throw new TypeError(`${where} must be an object { stage, replica, url, engine? }`);
    checkObject(target, where, ENGINE_TARGET_KEYS);
    const { stage, replica } = target;
    if (!Number.isInteger(stage) || stage < 0 || stage >= replicasPerStage.length) {
      throw new RangeError(
        `${where}.stage must be one of the ${replicasPerStage.length} stages of stagePools (0..${replicasPerStage.length - 1}); got ${shown(stage)}`,
      );
    }
    const replicas = replicasPerStage[stage] as number;
    if (!Number.isInteger(replica) || replica < 0 || replica >= replicas) {
      throw new RangeError(`${where}.replica must be a replica of stage ${stage} (0..${replicas - 1}); got ${shown(replica)}`);
    }
    const url = parseUrl(target.url, `${where}.url`);
    const engine = engineLabel(target.engine, `${where}.engine`);
    const key = replicaKey(stage, replica);
    if (seenReplicas.has(key)) throw new RangeError(`${where}: stage ${stage} replica ${replica} is listed twice in ${optionName}.engines`);
    seenReplicas.add(key);
    const engineKey = `${url.href} ${engine}`;
    if (seenEngines.has(engineKey)) throw new RangeError(`${where}: engine ${engine} of ${redactedUrl(url)} is already another replica's`);
    seenEngines.add(engineKey);
    return { stage, replica, url, engine };
  });
  const passThrough = options.passThrough ?? [];
  if (!Array.isArray(passThrough)) throw new TypeError(`${optionName}.passThrough must be a list of metric family names`);
  passThrough.forEach((name, i) => {
    if (typeof name !== 'string' || !METRIC_NAME_PATTERN.test(name)) {
      throw new TypeError(`${optionName}.passThrough[${i}] must be a Prometheus metric name; got ${shown(name)}`);
    }
  });
  return {
    targets,
    timeoutMillis: duration(options.timeoutMillis, DEFAULT_ENGINE_TIMEOUT_MILLIS, `${optionName}.timeoutMillis`, false),
    cacheMillis: duration(options.cacheMillis, DEFAULT_ENGINE_CACHE_MILLIS, `${optionName}.cacheMillis`, true),
    intervalMillis: duration(options.intervalMillis, 0, `${optionName}.intervalMillis`, true),
    passThrough: new Set(passThrough),
    maxResponseBytes: duration(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, `${optionName}.maxResponseBytes`, false),
  };
}

function parseUrl(value: unknown, where: string): URL {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const given = typeof value === 'string' ? `the string ${JSON.stringify(redactedUrlText(value))}` : shown(value);
    throw new TypeError(`${where} must be an http(s) URL such as http://127.0.0.1:8000/metrics; got ${given}`);
  }
  return url;
}

function engineLabel(value: unknown, where: string): string {
  if (value === undefined) return '0';
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^(0|[1-9]\d*)$/.test(text))
    throw new TypeError(`${where} must be a non-negative integer (vLLM's engine label); got ${shown(value)}`);
  return text;
}

function duration(value: unknown, fallback: number, where: string, zeroAllowed: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!zeroAllowed && value === 0)) {
    throw new RangeError(`${where} must be a finite number ${zeroAllowed ? '>= 0' : '> 0'}; got ${shown(value)}`);
  }
  return value;
}
