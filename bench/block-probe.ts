import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

export interface Probed<T> {
  readonly result: T;
  /** The longest the event loop was kept from running a 1 ms timer while `work` ran. */
  readonly worstBlockNs: number;
  readonly wallNs: number;
  /** Peak resident set size while `work` ran, over the RSS before it. */
  readonly rssGrowthBytes: number;
}

/** Runs `work` with an event-loop delay monitor (1 ms resolution) and an RSS sampler alongside. */
export async function probe<T>(work: () => Promise<T>): Promise<Probed<T>> {
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 2);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const start = performance.now();
  try {
    const result = await work();
    const wallNs = (performance.now() - start) * 1e6;
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    // The monitor's figure includes its own 1 ms period.
    return { result, worstBlockNs: Math.max(0, delay.max - 1e6), wallNs, rssGrowthBytes: rssPeak - rssBefore };
  } finally {
    delay.disable();
    clearInterval(sampler);
  }
}
