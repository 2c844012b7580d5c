import { shown } from '../common/option-checks';

/**
 * Bucket boundaries, in the units the families observe (seconds, bytes, tokens, ratios).
 * Values are the upstream projects' own: vLLM's `vllm/v1/metrics/buckets.py` and vLLM-Omni's
 * `metrics/definitions.py`.
 */

// ---- vLLM-Omni pipeline families ----
export const SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0] as const;
export const SECONDS_FAST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0] as const;
export const RTF_BUCKETS = [0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0, 5.0, 10.0] as const;
/** prometheus_client's `Histogram.DEFAULT_BUCKETS`, used where vLLM-Omni declares a histogram without buckets. */
export const PROMETHEUS_CLIENT_DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0] as const;
export const BYTES_BUCKETS = [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456] as const;

// ---- upstream vLLM families ----
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
] as const;
export const TIME_TO_FIRST_TOKEN_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
] as const;
export const INTER_TOKEN_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0] as const;
export const ITERATION_TOKENS_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384] as const;
export const REQUEST_PARAMS_N_BUCKETS = [1, 2, 5, 10, 20] as const;
export const REQUEST_NUM_PREEMPTIONS_BUCKETS = [1, 2, 3, 4, 5, 10, 20] as const;
export const KV_CACHE_RESIDENCY_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800] as const;
export const NIXL_XFER_TIME_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0] as const;
export const NIXL_POST_TIME_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0] as const;
/** `[2 ** (10 + i) for i in range(1, 25, 2)]` in vLLM's NIXL connector. */
export const NIXL_BYTES_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, k) => 2 ** (11 + 2 * k));
/** `TRANSFER_SIZE_BUCKETS` of vLLM's offloading connector (`kv_connector/v1/offloading/metrics.py`), bytes. */
export const KV_OFFLOAD_TRANSFER_SIZE_BUCKETS = [1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6] as const;
/** The offloading connector's lookup-call histogram (`LOOKUP_SYNC_DELAY` in `offloading/metrics.py`), seconds. */
export const KV_OFFLOAD_LOOKUP_SYNC_DELAY_BUCKETS = [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1] as const;
/** The offloading connector's deferred-lookup histogram (`LOOKUP_ASYNC_DELAY` in `offloading/metrics.py`), seconds. */
export const KV_OFFLOAD_LOOKUP_ASYNC_DELAY_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10] as const;
export const NIXL_NUM_DESCRIPTORS_BUCKETS = [10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000] as const;

/**
 * vLLM's `build_1_2_5_buckets(max_model_len)`: 1, 2, 5, 10, 20, 50, … up to and including the
 * largest value not above `maxModelLen`.
 */
export function build125Buckets(maxModelLen: number): number[] {
  if (!Number.isInteger(maxModelLen) || maxModelLen < 1) {
    throw new RangeError(`maxModelLen must be a positive integer; got ${shown(maxModelLen)}`);
  }
  const buckets: number[] = [];
  for (let exponent = 0; ; exponent++) {
    for (const mantissa of [1, 2, 5]) {
      const value = mantissa * 10 ** exponent;
      if (value > maxModelLen) return buckets;
      buckets.push(value);
    }
  }
}
