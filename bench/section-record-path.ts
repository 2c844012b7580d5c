import { DECODE_OUTPUTS, RECORD_PATH_CONTENDERS, type RecordPathContender } from './record-path-contenders';
import { ratioOf, type Measurement } from './measure';
import { printRow, printTitle } from './report';
import { contender, figure, interleave } from './rounds';

const LABELS: Readonly<Record<RecordPathContender, string>> = {
  direct: 'host pollEngine, unpatched',
  'idle-wrapper': 'patched, nobody listening',
  'stats-off': 'hooks on, logStats off',
  'stats-poll': 'hooks on, a poll with scheduler stats only',
  'decode-poll': `hooks on, a poll with ${DECODE_OUTPUTS} decode tokens`,
  'decode-poll-1': 'hooks on, a poll with one decode token',
  'decode-poll-native': `the same, native histograms on for every histogram family`,
};

/** Flags that let a contender count its allocations: no young-generation collection for 256 MiB. */
const COUNTING_FLAGS = ['--min-semi-space-size=256', '--max-semi-space-size=256'];

/** One host poll through the hooks: time against the bare method, and heap allocated per poll and per token. */
export async function recordPathSection(rounds: number, polls: number) {
  const results = await interleave(
    RECORD_PATH_CONTENDERS.map((name) => contender(name, 'record-path', { contender: name, polls, blocks: 5 }, { exposeGc: true, nodeFlags: COUNTING_FLAGS })),
    rounds,
  );
  const ns = (name: RecordPathContender): Measurement => figure(results, name, 'nsPerPoll');
  const direct = ns('direct');
  printTitle('3. One engine poll on the record path (each contender in its own process)');
  for (const name of RECORD_PATH_CONTENDERS) {
    const base = name === 'decode-poll-native' ? 'decode-poll' : 'direct';
    printRow(LABELS[name], ns(name), 'ns', name === 'direct' ? undefined : { to: base, ratio: ratioOf(ns(name), ns(base)) });
  }
  const statsPollBytes = figure(results, 'stats-poll', 'bytesPerPoll');
  const tokenBytes = figure(results, 'decode-poll', 'bytesPerToken');
  printRow('allocated per scheduler-stats-only poll', statsPollBytes, 'bytes');
  printRow('allocated per decode token', tokenBytes, 'bytes');
  const singleTokenPollBytes = figure(results, 'decode-poll-1', 'bytesPerPoll');
  printRow('allocated per one-token decode poll', singleTokenPollBytes, 'bytes');
  return {
    idleWrapper: ratioOf(ns('idle-wrapper'), direct),
    statsOff: ratioOf(ns('stats-off'), direct),
    nativeHistograms: ratioOf(ns('decode-poll-native'), ns('decode-poll')),
    statsPollBytes,
    tokenBytes,
    singleTokenPollBytes,
    nsPerPoll: Object.fromEntries(RECORD_PATH_CONTENDERS.map((name) => [name, ns(name)])),
  };
}
