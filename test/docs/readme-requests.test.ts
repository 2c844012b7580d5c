import assert from 'node:assert/strict';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import { readPage } from './doc-pages';

/** One `curl` line of the README: its URL, headers, body, and the `grep -E` its output goes through. */
interface CurlLine {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly grep: RegExp | undefined;
}

function curlLines(readme: string): CurlLine[] {
  return readme
    .split('\n')
    .filter((line) => line.startsWith('    curl '))
    .map((line) => {
      const [command = '', grep] = line.trim().split(' | grep -E ');
      const quoted = [...command.matchAll(/(-H|-d) '([^']*)'/g)];
      return {
        url: /\blocalhost:\d+\S*/.exec(command)?.[0] ?? '',
        headers: Object.fromEntries(quoted.filter(([, flag]) => flag === '-H').map(([, , header]) => (header ?? '').split(': ') as [string, string])),
        body: quoted.find(([, flag]) => flag === '-d')?.[2],
        grep: grep === undefined ? undefined : new RegExp(grep.replace(/^'|'$/g, ''), 'm'),
      };
    });
}

/**
 * The README's requests for `npm start`, sent as written to the reference pipeline `npm start`
 * runs (on free ports here, where the README says 8000 and 9464): each is answered 200, and
 * `/metrics` then counts the three requests.
 */
describe("README.md: the requests it shows for npm start's API", function () {
  this.timeout(60_000);
  let pipeline: ReferencePipeline | undefined;

  before(async () => {
    pipeline = await startReferencePipeline({ port: 0, metricsPort: 0, profile: 'fast', logIntervalSeconds: 0, logSink: { info: () => undefined } });
  });
  after(async () => {
    await pipeline?.stop();
  });

  it('chat, streamed audio and an image are answered, and /metrics counts them', async () => {
    const lines = curlLines(readPage('README.md'));
    assert.deepEqual(
      lines.map((line) => line.url.replace(/^localhost:\d+/, '')),
      ['/v1/chat/completions', '/v1/chat/completions', '/v1/images/generations', '/metrics'],
    );
    const ports: Record<string, string> = { '8000': pipeline!.apiUrl, '9464': pipeline!.metricsUrl.replace(/\/metrics$/, '') };
    const answers: string[] = [];
    for (const line of lines) {
      const url = line.url.replace(/^localhost:(\d+)/, (_, port: string) => ports[port] ?? `http://localhost:${port}`);
      const response = await fetch(url, { method: line.body === undefined ? 'GET' : 'POST', headers: line.headers, body: line.body });
      assert.equal(response.status, 200, `${line.url}: ${response.status}`);
      const text = await response.text();
      answers.push(line.grep === undefined ? text : text.split('\n').filter((one) => line.grep?.test(one)).join('\n'));
    }
    const [chat, stream, image, counted] = answers;
    assert.equal((JSON.parse(chat ?? '') as { object: string }).object, 'chat.completion');
    assert.ok(stream?.trimEnd().endsWith('data: [DONE]'), 'the stream ends with [DONE]');
    assert.match(stream ?? '', /"audio":\{/);
    assert.match((JSON.parse(image ?? '') as { data: Array<{ b64_json: string }> }).data[0]?.b64_json ?? '', /^iVBORw0KGgo/);
    const samples = (counted ?? '').split('\n').map((one) => one.split(' ') as [string, string]);
    const total = (prefix: string): number => samples.filter(([name]) => name.startsWith(prefix)).reduce((sum, [, value]) => sum + Number(value), 0);
    assert.equal(total('vllm:omni_requests_success_total{'), 3);
    assert.equal(total('vllm:omni_e2e_request_latency_s_count{'), 3);
  });
});
