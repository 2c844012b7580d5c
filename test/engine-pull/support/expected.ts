import { parseSamples, type Sample } from '../../support/exposition';

/**
 * What the exposition must carry for one pulled replica, computed from the fixture with the
 * tests' own sample reader (not the package's parser): every `vllm:*` sample of `engine` (and those
 * without an engine label), `_created` included, `engine` replaced by `stage` + `replica`, values
 * as printed. Each as one comparable line.
 */
export function expectedLines(fixture: string, engine: string, stage: number, replica: number): string[] {
  return parseSamples(fixture)
    .filter((sample) => sample.name.startsWith('vllm:') && (sample.labels.engine === undefined || sample.labels.engine === engine))
    .map((sample) => {
      const { engine: _engine, ...labels } = sample.labels;
      return line({ ...sample, labels: { ...labels, stage: String(stage), replica: String(replica) } });
    })
    .sort();
}

/** The `vllm:*` samples of one (stage, replica) in an exposition, the package's own pipeline families left out. */
export function servedLines(exposition: string, stage: number, replica: number, pipelinePrefix = 'vllm:omni_'): string[] {
  return parseSamples(exposition)
    .filter((sample) => sample.name.startsWith('vllm:') && !sample.name.startsWith(pipelinePrefix))
    .filter((sample) => sample.labels.stage === String(stage) && sample.labels.replica === String(replica))
    .map(line)
    .sort();
}

function line(sample: Sample): string {
  const labels = Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1));
  return `${sample.name}${JSON.stringify(labels)} ${sample.rawValue}`;
}
