import assert from 'node:assert/strict';
import { renderStore } from '../support/exposition';
import { ProcessCollector } from '../../instrumentation/process/process-collector';
import { parseBootTime, parseMaxOpenFiles, parseProcStat } from '../../instrumentation/process/proc-parsers';
import { fakeProc, processStore, pythonProcessCollector, sampleLines, type FakeProc } from './process-fixture';
import { needPeer } from '../support/peers/need-peer';

/** A stat line whose command name holds spaces and parentheses, as a process may name itself. */
const SELF_STAT =
  '4242 (node (worker) 1) S 1 4242 4242 0 -1 4194560 123456 0 12 0 1234 567 0 0 20 0 11 0 987654 1234567890 45678 18446744073709551615 1 1 0 0 0 0 0 4096 134234626 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n';
const PROC_STAT = 'cpu  1 2 3 4\nintr 0\nctxt 99\nbtime 1767225600\nprocesses 1234\n';
const LIMITS = [
  'Limit                     Soft Limit           Hard Limit           Units     ',
  'Max cpu time              unlimited            unlimited            seconds   ',
  'Max open files            65536                1048576              files     ',
  'Max locked memory         8388608              8388608              bytes     ',
  '',
].join('\n');

describe('process_* values: the same as prometheus_client computes from the same /proc', function () {
  needPeer('debian-prometheus-client', this);
  it('parses the fields prometheus_client reads, after the last parenthesis', () => {
    assert.deepEqual(parseProcStat(SELF_STAT), { userTicks: 1234, systemTicks: 567, startTicks: 987654, virtualMemoryBytes: 1234567890 });
    assert.equal(parseBootTime(PROC_STAT), 1767225600);
    assert.equal(parseMaxOpenFiles(LIMITS), 65536);
  });

  it('rejects what it cannot read as a number: a truncated stat, no btime, an unlimited soft limit', () => {
    assert.throws(() => parseProcStat('4242 (node) S 1 2 3'), /field 11/);
    assert.throws(() => parseBootTime('cpu 1 2 3\n'), /btime/);
    assert.throws(() => parseMaxOpenFiles(LIMITS.replace('65536  ', 'unlimited')), /field 3/);
  });

  const made: FakeProc[] = [];
  const fake = (files: Parameters<typeof fakeProc>[0]): FakeProc => {
    const proc = fakeProc(files);
    made.push(proc);
    return proc;
  };
  afterEach(() => {
    for (const proc of made.splice(0)) proc.remove();
  });

  it('prints byte-identical samples for a fake /proc (virtual memory, start time, CPU seconds, open and max fds)', () => {
    const proc = fake({ stat: PROC_STAT, selfStat: SELF_STAT, limits: LIMITS, openFds: 7 });
    const python = pythonProcessCollector(proc.root);
    const store = processStore();
    new ProcessCollector(store, { procfs: true, proc: proc.reader }).collect();
    for (const format of ['text', 'openmetrics'] as const) {
      const ours = sampleLines(renderStore(store, { format, createdSeries: true }).toString('utf8'), 'process_');
      // Resident memory is the running process's (libuv's /proc/self/stat read), not the fake file's.
      const notResident = (line: string): boolean => !line.startsWith('process_resident_memory_bytes ');
      assert.deepEqual(ours.filter(notResident), sampleLines(python[format], 'process_').filter(notResident), format);
    }
    assert.deepEqual(
      sampleLines(renderStore(store, { format: 'text', createdSeries: true }).toString('utf8'), 'process_').filter(
        (line) => !line.startsWith('process_resident'),
      ),
      [
        'process_virtual_memory_bytes 1.23456789e+09',
        'process_start_time_seconds 1.76723547654e+09',
        'process_cpu_seconds_total 18.009999999999998',
        'process_open_fds 7.0',
        'process_max_fds 65536.0',
      ],
    );
  });

  it('the CPU counter follows the file as it grows, and ignores a total that went down', () => {
    let selfStat = SELF_STAT;
    const proc = fake({ stat: PROC_STAT, selfStat, limits: LIMITS, openFds: 1 });
    const reader = { ...proc.reader, readFile: (path: string) => (path === '/proc/self/stat' ? selfStat : proc.reader.readFile(path)) };
    const store = processStore();
    const collector = new ProcessCollector(store, { procfs: true, proc: reader });
    const cpu = (): number | undefined => {
      collector.collect();
      const line = sampleLines(renderStore(store, { format: 'text', createdSeries: false }).toString('utf8'), 'process_cpu_seconds_total ')[0];
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    assert.equal(cpu(), 1234 / 100 + 567 / 100);
    selfStat = SELF_STAT.replace(' 1234 567 ', ' 1300 600 ');
    assert.equal(cpu(), 19);
    selfStat = SELF_STAT;
    assert.equal(cpu(), 19, 'a counter never decreases');
  });
});
