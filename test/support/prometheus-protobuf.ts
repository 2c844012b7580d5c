import { join } from 'node:path';
import * as protobuf from 'protobufjs';

/**
 * The Prometheus protobuf exposition read back with protobufjs and the `.proto` schema of
 * client_model (as Prometheus 2.42 vendors it, with the created timestamps and native exemplars of
 * client_model 0.6), independently of the package's own encoder.
 */
const root = protobuf.loadSync(join(__dirname, '..', 'exporters', 'fixtures', 'io-prometheus-client-metrics.proto'));
const MetricFamily = root.lookupType('io.prometheus.client.MetricFamily');

const TO_OBJECT: protobuf.IConversionOptions = { enums: String, longs: Number, arrays: true, defaults: false };

export interface DecodedSpan {
  offset?: number;
  length?: number;
}

export interface DecodedExemplar {
  label: Array<{ name: string; value: string }>;
  value?: number;
  timestamp?: DecodedTimestamp;
}

export interface DecodedHistogram {
  sampleCount?: number;
  sampleSum?: number;
  bucket: Array<{ cumulativeCount?: number; upperBound?: number; exemplar?: DecodedExemplar }>;
  schema?: number;
  zeroThreshold?: number;
  zeroCount?: number;
  negativeSpan: DecodedSpan[];
  negativeDelta: number[];
  positiveSpan: DecodedSpan[];
  positiveDelta: number[];
  createdTimestamp?: DecodedTimestamp;
  /** A native histogram's own exemplars. */
  exemplars: DecodedExemplar[];
}

export interface DecodedTimestamp {
  seconds?: number;
  nanos?: number;
}

export interface DecodedMetric {
  label: Array<{ name: string; value: string }>;
  counter?: { value?: number; exemplar?: DecodedExemplar; createdTimestamp?: DecodedTimestamp };
  gauge?: { value?: number };
  untyped?: { value?: number };
  histogram?: DecodedHistogram;
}

export interface DecodedFamily {
  name: string;
  help?: string;
  type?: string;
  metric: DecodedMetric[];
}

/** Every length-delimited `MetricFamily` of a protobuf exposition body, as plain objects. */
export function decodeMetricFamilies(body: Uint8Array): DecodedFamily[] {
  const reader = protobuf.Reader.create(body);
  const families: DecodedFamily[] = [];
  while (reader.pos < reader.len) families.push(MetricFamily.toObject(MetricFamily.decodeDelimited(reader), TO_OBJECT) as DecodedFamily);
  return families;
}
