/**
 * The record-path contenders, each alone in its process (`contenders/record-path.ts`):
 * - `direct`: the host's `pollEngine`, unpatched;
 * - `idle-wrapper`: the patched method with nobody listening (a wrapper left in another tool's chain);
 * - `stats-off`: the hooks on a handle registered with `logStats: false`;
 * - `stats-poll` / `decode-poll`: the hooks with `logStats`, a poll carrying scheduler stats only, or
 *   also one decode token for each of `DECODE_OUTPUTS` requests;
 * - `decode-poll-1`: a poll carrying one decode token (a request alone on its replica);
 * - `decode-poll-native`: the decode poll with native histograms on for every histogram family.
 */
export const RECORD_PATH_CONTENDERS = ['direct', 'idle-wrapper', 'stats-off', 'stats-poll', 'decode-poll', 'decode-poll-1', 'decode-poll-native'] as const;
export type RecordPathContender = (typeof RECORD_PATH_CONTENDERS)[number];
export const DECODE_OUTPUTS = 32;

/** Decode outputs a contender's poll carries (none: scheduler stats only). */
export function decodeOutputsOf(contender: RecordPathContender): number {
  if (contender === 'decode-poll' || contender === 'decode-poll-native') return DECODE_OUTPUTS;
  return contender === 'decode-poll-1' ? 1 : 0;
}
