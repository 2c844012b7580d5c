import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { parseSamples, type CellFactory, type Labels } from './cells';

/** prom-client as its users write it: one metric per family, a cached child per label set. */
export function promClientCells(): CellFactory {
  const registry = new Registry();
  const metrics = new Map<string, Counter | Gauge | Histogram>();
  function metric<M extends Counter | Gauge | Histogram>(name: string, create: () => M): M {
    let found = metrics.get(name);
    if (found === undefined) {
      found = create();
      metrics.set(name, found);
    }
    return found as M;
  }
  const common = (name: string, labels: Labels) => ({ name, help: name, labelNames: Object.keys(labels), registers: [registry] });
  return {
    counter: (name, labels) => metric(name, () => new Counter(common(name, labels))).labels(labels),
    gauge: (name, labels) => metric(name, () => new Gauge(common(name, labels))).labels(labels),
    histogram: (name, labels, bounds) => metric(name, () => new Histogram({ ...common(name, labels), buckets: [...bounds] })).labels(labels),
    samples: async () => parseSamples(await registry.metrics()),
  };
}
