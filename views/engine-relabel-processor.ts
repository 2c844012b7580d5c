import type { Attributes } from '@opentelemetry/api';
import type { IAttributesProcessor } from '@opentelemetry/sdk-metrics';
import { WarnOnce } from './common/diag-warnings';
import type { StageReplicaMap } from './stage-replica-map';

/**
 * Rewrites vLLM's `engine` attribute into `stage` + `replica` using the stage/replica map, so any
 * measurement recorded the upstream way (`{model_name, engine: "3"}`) lands on the per-replica
 * series. Usable in a user's own views.
 *
 * Upstream raises on an unknown engine index; a record path must not throw, so an unknown index is
 * kept visible as `stage="unknown", replica="<engine>"` and reported once through `diag`.
 *
 * Rewritten objects are cached by input identity, so callers that reuse attribute objects (all of
 * this package's recorders do) pay no allocation per record.
 */
export class EngineRelabelProcessor implements IAttributesProcessor {
  private rewritten = new WeakMap<Attributes, Attributes>();
  private mapVersion: number;
  private readonly unknownEngines = new WarnOnce();

  constructor(private readonly map: StageReplicaMap) {
    this.mapVersion = map.version;
  }

  process(incoming: Attributes): Attributes {
    if (!('engine' in incoming)) return incoming;
    // Replicas were added or removed: an engine index may now mean something else.
    if (this.map.version !== this.mapVersion) {
      this.rewritten = new WeakMap();
      this.mapVersion = this.map.version;
    }
    const cached = this.rewritten.get(incoming);
    if (cached !== undefined) return cached;
    const result = this.rewrite(incoming);
    this.rewritten.set(incoming, result);
    return result;
  }

  private rewrite(incoming: Attributes): Attributes {
    const { engine, ...rest } = incoming;
    const index = typeof engine === 'string' && engine.trim() !== '' ? Number(engine) : engine;
    const target = typeof index === 'number' ? this.map.lookup(index) : undefined;
    if (target !== undefined) return { ...rest, stage: target.stage, replica: target.replica };
    const engineText = String(engine);
    this.unknownEngines.warn(engineText, `engine index ${engineText} is not in the stage/replica map; recorded as stage="unknown"`);
    return { ...rest, stage: 'unknown', replica: engineText };
  }
}
