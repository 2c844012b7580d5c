import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { renderStore } from '../support/exposition';
import { startProcessMetrics, type ProcessMetrics } from '../../instrumentation/process/process-metrics';
import type { SeriesStore } from '../../views/store/series-store';
import { processStore, sampleLines, sampleValue } from './process-fixture';

function scrape(store: SeriesStore): string {
  return renderStore(store, { format: 'text', createdSeries: true }).toString('utf8');
}

function value(text: string, name: string): number {
  const found = sampleValue(text, name);
  assert.ok(found !== undefined, `${name} is printed`);
  return found;
}

describe('process families: live values on this machine', function () {
  if (process.platform !== 'linux') return;
  let store: SeriesStore;
  let collector: ProcessMetrics;

  beforeEach(() => {
    store = processStore();
    collector = startProcessMetrics(store);
  });

  afterEach(() => collector.stop());

  it('resident memory is positive and at most the virtual size', () => {
    const text = scrape(store);
    const rss = value(text, 'process_resident_memory_bytes');
    assert.ok(rss > 0);
    assert.ok(rss <= value(text, 'process_virtual_memory_bytes'));
  });

  it('start time within a few seconds of now - uptime', () => {
    const expected = Date.now() / 1000 - process.uptime();
    assert.ok(Math.abs(value(scrape(store), 'process_start_time_seconds') - expected) < 3);
  });

  it('CPU seconds grow across a busy loop', () => {
    const before = value(scrape(store), 'process_cpu_seconds_total');
    const until = Date.now() + 250;
    let spin = 0;
    while (Date.now() < until) spin++;
    assert.ok(spin > 0);
    assert.ok(value(scrape(store), 'process_cpu_seconds_total') > before);
  });

  it('0 < open fds <= max fds, and open fds is the /proc/self/fd listing (its own descriptor counted, as in Python)', () => {
    const text = scrape(store);
    const open = value(text, 'process_open_fds');
    const max = value(text, 'process_max_fds');
    assert.ok(open > 0 && open <= max);
    assert.ok(Math.abs(open - readdirSync('/proc/self/fd').length) <= 2);
  });

  it('heap used within heap total; external memory and active handles/requests read', () => {
    const text = scrape(store);
    const used = value(text, 'nodejs_heap_size_used_bytes');
    assert.ok(used > 0 && used <= value(text, 'nodejs_heap_size_total_bytes'));
    assert.ok(value(text, 'nodejs_external_memory_bytes') > 0);
    assert.ok(value(text, 'nodejs_active_handles_total') >= 0);
    assert.ok(value(text, 'nodejs_active_requests_total') >= 0);
  });

  it('event loop lag: left out until a turn has been measured, then the last turn a scrape started, and a blocked turn shows', async () => {
    assert.equal(sampleValue(scrape(store), 'nodejs_eventloop_lag_seconds'), undefined, 'the first scrape starts a measurement');
    setImmediate(() => {
      // Queued after the measurement's start: it blocks the turn being measured.
      const until = Date.now() + 60;
      while (Date.now() < until);
    });
    await nextTurn();
    await nextTurn();
    await nextTurn();
    const lag = value(scrape(store), 'nodejs_eventloop_lag_seconds');
    assert.ok(lag >= 0.05 && lag < 5, `lag ${lag}`);
  });

  it('GC durations by kind after garbage is made', async () => {
    let garbage: unknown[] = [];
    for (let round = 0; round < 20; round++) {
      garbage = [];
      for (let i = 0; i < 50_000; i++) garbage.push({ i, text: `item ${i}` });
    }
    assert.ok(garbage.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const counts = sampleLines(scrape(store), 'nodejs_gc_duration_seconds_count{');
    assert.ok(counts.length > 0, 'some collection observed');
    for (const line of counts) assert.match(line, /^nodejs_gc_duration_seconds_count\{kind="(major|minor|incremental|weakcb)"\} [1-9]/);
  });

  it('stop(): no more refreshes and no more GC observations', async () => {
    scrape(store);
    collector.stop();
    const before = scrape(store);
    let garbage: unknown[] = [];
    for (let round = 0; round < 10; round++) garbage = Array.from({ length: 50_000 }, (_, i) => ({ i }));
    assert.ok(garbage.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const until = Date.now() + 50;
    while (Date.now() < until);
    const after = scrape(store);
    assert.equal(after, before);
  });
});
