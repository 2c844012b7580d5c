import assert from 'node:assert/strict';
import { TraceFlags } from '@opentelemetry/api';
import { execFileSync } from 'node:child_process';
import { PROTOBUF_CONTENT_TYPE } from '../../exporters/protobuf-negotiation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { resolveFullCatalog } from '../../views/catalog/catalog';
import { httpGetBytes } from '../support/http';
import { needPeer } from '../support/peers/need-peer';
import { decodeMetricFamilies, type DecodedExemplar, type DecodedFamily, type DecodedHistogram } from '../support/prometheus-protobuf';

const FAMILY = 'vllm:omni_e2e_request_latency_s';
const PROTOBUF_ACCEPT = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

/** Latencies from a seeded generator: spread over four decades, a few exact zeros and powers of two (bucket bounds). */
function latencies(count: number, seed: number): number[] {
  let state = seed;
  const random = (): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const values = Array.from({ length: count }, () => 0.001 * Math.exp(9 * random()));
  return [...values, 0, 0, 0.5, 1, 2, 4, 2 ** -10, 1e-9];
}

interface Layout {
  readonly schema: number;
  readonly maxBuckets: number;
  readonly zeroThreshold: number;
}

/** An observation made within a trace. */
interface TracedObservation {
  readonly value: number;
  readonly traceId: string;
  readonly spanId: string;
}

/** What client_golang makes of the observations, then the traced ones: the protobuf exposition of one histogram with the family's buckets. */
function clientGolangHistogram(
  binary: string,
  layout: Layout,
  observations: readonly number[],
  exemplars: readonly TracedObservation[] = [],
): DecodedHistogram {
  const family = resolveFullCatalog().byName(FAMILY);
  assert.ok(family);
  const spec = [{ name: 'h', help: family.help, buckets: family.buckets, ...layout, observations, exemplars }];
  const body = execFileSync(binary, ['histogram'], { input: JSON.stringify(spec), maxBuffer: 1 << 24 });
  const [decoded] = decodeMetricFamilies(body);
  const histogram = decoded?.metric[0]?.histogram;
  assert.ok(histogram, 'client_golang printed one histogram');
  return histogram;
}

/** The package's own: the same observations recorded through the pipeline recorder, read back from a protobuf scrape. */
async function packageHistogram(
  layout: Layout,
  observations: readonly number[],
  exemplars: readonly TracedObservation[] = [],
): Promise<{ histogram: DecodedHistogram; handle: OmniMetricsHandle }> {
  const handle = await registerOmniMetrics({
    modelName: 'm',
    logStats: true,
    logIntervalSeconds: 0,
    prometheus: { host: '127.0.0.1', port: 0 },
    processMetrics: false,
    selfCheck: false,
    exemplars: exemplars.length > 0,
    nativeHistograms: { families: [FAMILY], ...layout },
  });
  for (const value of observations) handle.pipeline.requestSucceeded(value, 'stop');
  for (const { value, traceId, spanId } of exemplars) {
    handle.store.exemplarScope?.within({ traceId, spanId, traceFlags: TraceFlags.SAMPLED }, () => handle.pipeline.requestSucceeded(value, 'stop'));
  }
  const response = await httpGetBytes(`http://127.0.0.1:${handle.prometheusServer?.port}/metrics`, { Accept: PROTOBUF_ACCEPT });
  assert.equal(response.headers['content-type'], PROTOBUF_CONTENT_TYPE);
  const family = decodeMetricFamilies(response.body).find((one: DecodedFamily) => one.name === FAMILY);
  const histogram = family?.metric[0]?.histogram;
  assert.ok(histogram, `${FAMILY} in the protobuf scrape`);
  return { histogram, handle };
}

/**
 * The fields both sides define the same way. client_golang's created timestamp and exemplar times
 * are its own clock's, its exemplar labels in no fixed order, and it leaves out the classic `+Inf` bucket unless an exemplar is on it (a
 * reader takes its count from the sample count); the package writes it, as its text formats do.
 * These are set aside here, the rest must be equal.
 */
function comparable(histogram: DecodedHistogram): Omit<DecodedHistogram, 'createdTimestamp'> {
  const { createdTimestamp: _created, ...rest } = histogram;
  const last = rest.bucket.at(-1);
  const withInf =
    last?.upperBound === Infinity && last.cumulativeCount === rest.sampleCount && last.exemplar === undefined ? rest.bucket.slice(0, -1) : rest.bucket;
  // client_golang's exemplar labels come in its map's order, which Go randomizes: compared by name.
  const untimed = (exemplar: DecodedExemplar): DecodedExemplar => ({
    label: [...exemplar.label].sort((a, b) => a.name.localeCompare(b.name)),
    value: exemplar.value,
  });
  const bucket = withInf.map((one) => (one.exemplar === undefined ? one : { ...one, exemplar: untimed(one.exemplar) }));
  return { ...rest, bucket, exemplars: rest.exemplars.map(untimed) };
}

/**
 * The same observations into client_golang (v1.25.0) native histograms with the same schema, zero
 * threshold and bucket limit: the package's protobuf `Histogram` must be the one client_golang
 * gathers, classic buckets, spans, deltas, zero bucket and schema reductions included.
 */
describe('client_golang differential: native histograms', function () {
  const clientGolang = needPeer('client-golang', this);
  this.timeout(60_000);
  const handles: OmniMetricsHandle[] = [];
  let binary: string;

  before(function () {
    binary = clientGolang.paths().bin['omni-client-golang'] as string;
  });
  after(async () => {
    await Promise.all(handles.map((handle) => handle.shutdown()));
  });

  const cases: ReadonlyArray<{ title: string; layout: Layout; observations: number[] }> = [
    {
      title: 'schema 3, the defaults (160 buckets, zero threshold 2^-128)',
      layout: { schema: 3, maxBuckets: 160, zeroThreshold: 2 ** -128 },
      observations: latencies(500, 7),
    },
    {
      title: 'schema 8 down to what 20 buckets hold (schema reductions)',
      layout: { schema: 8, maxBuckets: 20, zeroThreshold: 2 ** -128 },
      observations: latencies(300, 11),
    },
    { title: 'schema 0 with a zero threshold of 0.002', layout: { schema: 0, maxBuckets: 160, zeroThreshold: 0.002 }, observations: latencies(200, 5) },
    { title: 'schema -4 (buckets of a factor 65536)', layout: { schema: -4, maxBuckets: 160, zeroThreshold: 2 ** -128 }, observations: latencies(100, 3) },
  ];
  it('schema 3 with exemplars: the same classic-bucket exemplars and the same native exemplars, with the trace ids', async () => {
    const layout = { schema: 3, maxBuckets: 160, zeroThreshold: 2 ** -128 };
    const observations = latencies(200, 13);
    // One traced observation per classic bucket it lands in (client_golang keeps up to 10 native exemplars, spread by value).
    const exemplars: TracedObservation[] = [0.015, 0.09, 0.7, 3.5, 45, 5000].map((value, i) => ({
      value,
      traceId: `${(i + 1).toString(16).padStart(2, '0')}${'ab'.repeat(15)}`,
      spanId: `${(i + 1).toString(16).padStart(2, '0')}${'cd'.repeat(7)}`,
    }));
    const { histogram, handle } = await packageHistogram(layout, observations, exemplars);
    handles.push(handle);
    const expected = clientGolangHistogram(binary, layout, observations, exemplars);
    assert.equal(expected.exemplars.length, 6, 'client_golang: six native exemplars');
    assert.deepEqual(comparable(histogram), comparable(expected));
    assert.deepEqual(
      histogram.exemplars.map((exemplar) => exemplar.label.find((label) => label.name === 'trace_id')?.value),
      exemplars.map((exemplar) => exemplar.traceId),
    );
    assert.ok(
      histogram.exemplars.every((exemplar) => (exemplar.timestamp?.seconds ?? 0) > 1.7e9),
      'every native exemplar has its time, which Prometheus requires',
    );
  });

  for (const { title, layout, observations } of cases) {
    it(`${title}: the same Histogram message`, async () => {
      const { histogram, handle } = await packageHistogram(layout, observations);
      handles.push(handle);
      assert.deepEqual(comparable(histogram), comparable(clientGolangHistogram(binary, layout, observations)));
      if (layout.maxBuckets < 160) assert.ok((histogram.schema ?? 0) < layout.schema, `schema ${histogram.schema}: reduced from ${layout.schema}`);
      if (layout.zeroThreshold > 1e-30) assert.ok((histogram.zeroCount ?? 0) > 2, `${histogram.zeroCount} in the zero bucket`);
    });
  }
});

/** client_golang's expfmt decoder (common v0.73.1) reads what the package serves, for each format it decodes. */
describe("client_golang's expfmt decoders read the package's expositions", function () {
  const clientGolang = needPeer('client-golang', this);
  this.timeout(60_000);
  let handle: OmniMetricsHandle;
  let binary: string;

  before(async function () {
    binary = clientGolang.paths().bin['omni-client-golang'] as string;
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      logIntervalSeconds: 0,
      prometheus: { host: '127.0.0.1', port: 0 },
      processMetrics: false,
      selfCheck: false,
      nativeHistograms: { families: [FAMILY] },
    });
    for (const value of latencies(50, 1)) handle.pipeline.requestSucceeded(value, 'stop');
  });
  after(() => handle.shutdown());

  interface GoFamily {
    name: string;
    metric: Array<{
      label?: Array<{ name: string; value: string }>;
      counter?: { createdTimestamp?: string };
      gauge?: { value: number };
      histogram?: { createdTimestamp?: string };
    }>;
  }

  /** A scrape with `accept`, decoded by expfmt's decoder for the Content-Type the package answered. */
  async function decoded(accept: string): Promise<GoFamily[]> {
    const response = await httpGetBytes(`http://127.0.0.1:${handle.prometheusServer?.port}/metrics`, { Accept: accept });
    return execFileSync(binary, ['decode', response.headers['content-type'] ?? ''], { input: response.body, maxBuffer: 1 << 26 })
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as GoFamily);
  }

  it('protobuf, OpenMetrics 1.0.0 and the 0.0.4 text all decode, to the same families (the text with its `_created` gauges)', async () => {
    const names = (families: ReadonlyArray<{ name: string }>): string[] => families.map((family) => family.name).sort();
    const protobuf = await decoded(PROTOBUF_ACCEPT);
    const openmetrics = await decoded('application/openmetrics-text;version=1.0.0');
    const text = await decoded('text/plain;version=0.0.4');
    assert.ok(names(protobuf).includes(FAMILY));
    assert.deepEqual(names(protobuf), names(await protobufFamilies(handle)));
    assert.deepEqual(names(openmetrics), names(protobuf));
    assert.deepEqual(
      names(text).filter((name) => !name.endsWith('_created')),
      names(protobuf),
    );
    // OpenMetrics' `_created` becomes the decoded counter's created timestamp: the time the text's `_created` gauge says.
    const counter = 'vllm:omni_requests_success_total';
    const created = openmetrics.find((family) => family.name === counter)?.metric[0]?.counter?.createdTimestamp;
    const gauge = text.find((family) => family.name === 'vllm:omni_requests_success_created')?.metric[0]?.gauge?.value;
    assert.ok(created !== undefined && gauge !== undefined, `${created} / ${gauge}`);
    assert.ok(Math.abs(Date.parse(created) - gauge * 1000) < 1, `${created} vs ${gauge}`);
    // The protobuf carries the same time as the counter's and the histogram's `created_timestamp` (to the float `_created` prints: well under a microsecond; Prometheus keeps milliseconds).
    const nanos = (timestamp: string | undefined): number => {
      const [, whole = '', fraction = ''] = /^(.*?)(?:\.(\d+))?Z$/.exec(timestamp ?? '') ?? [];
      return Date.parse(`${whole}Z`) * 1e6 + Number(fraction.padEnd(9, '0'));
    };
    assert.ok(Math.abs(nanos(protobuf.find((family) => family.name === counter)?.metric[0]?.counter?.createdTimestamp) - nanos(created)) < 1000);
    const histogramCreated = (families: GoFamily[]): string | undefined =>
      families.find((family) => family.name === FAMILY)?.metric[0]?.histogram?.createdTimestamp;
    assert.ok(histogramCreated(openmetrics) !== undefined && histogramCreated(protobuf) !== undefined);
    assert.ok(Math.abs(nanos(histogramCreated(protobuf)) - nanos(histogramCreated(openmetrics))) < 1000);
  });
});

async function protobufFamilies(handle: OmniMetricsHandle): Promise<DecodedFamily[]> {
  const response = await httpGetBytes(`http://127.0.0.1:${handle.prometheusServer?.port}/metrics`, { Accept: PROTOBUF_ACCEPT });
  return decodeMetricFamilies(response.body);
}
