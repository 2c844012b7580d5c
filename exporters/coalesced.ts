/** Wraps `render` so that calls overlapping in time share one run per key (concurrent scrapes, one rendering). */
export function coalesced<K, V>(render: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const inFlight = new Map<K, Promise<V>>();
  return (key) => {
    let running = inFlight.get(key);
    if (running === undefined) {
      running = render(key).finally(() => inFlight.delete(key));
      inFlight.set(key, running);
    }
    return running;
  };
}
