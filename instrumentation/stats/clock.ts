import { performance } from 'node:perf_hooks';

/**
 * The two clock domains of vLLM's stats. They are never mixed: an interval is always the difference of two
 * readings from the same clock.
 */

/** A clock reading in seconds. */
export type SecondsClock = () => number;

/**
 * Frontend wall clock in seconds since the Unix epoch, the domain of `time.time()`: request arrival times and
 * iteration timestamps, so TTFT and e2e latency are measured against it.
 */
export const wallClockSeconds: SecondsClock = () => Date.now() / 1000;

/**
 * Monotonic seconds, the domain of `time.monotonic()`: log intervals and throttles. Unlike the wall clock it never
 * jumps when the system time is adjusted. The origin is process start, so readings start near 0.
 */
export const monotonicSeconds: SecondsClock = () => performance.now() / 1000;
