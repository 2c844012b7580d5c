import { dirname, join } from 'node:path';
import * as protobuf from 'protobufjs';

/**
 * The official OTLP protobuf definitions (opentelemetry-proto `.proto` files), as shipped in
 * `@opentelemetry/otlp-grpc-exporter-base@0.38.0` — the devDependency alias
 * `opentelemetry-proto-files`, the last release that carried the raw `.proto` files. Loaded with
 * protobufjs, independently of the exporter's own hand-written serializer.
 */
export const PROTO_ROOT_DIR = join(dirname(require.resolve('opentelemetry-proto-files/package.json')), 'build', 'protos');

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(PROTO_ROOT_DIR, target);
root.loadSync('opentelemetry/proto/collector/metrics/v1/metrics_service.proto', { keepCase: false });
root.resolveAll();

export const ExportMetricsServiceRequest = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');
export const ExportMetricsServiceResponse = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse');
export const METRICS_SERVICE_EXPORT_PATH = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';

/** Plain-object form of a request: enums by name, 64-bit integers as decimal strings. */
export type DecodedRequest = Record<string, unknown>;

const TO_OBJECT: protobuf.IConversionOptions = { enums: String, longs: String, bytes: String, arrays: true, oneofs: true, defaults: false };

/** Binary protobuf (http/protobuf, grpc). */
export function decodeProtobuf(body: Uint8Array): DecodedRequest {
  return ExportMetricsServiceRequest.toObject(ExportMetricsServiceRequest.decode(body), TO_OBJECT);
}

/**
 * OTLP/JSON (http/json): the proto3 JSON mapping with OTLP's rules — lowerCamelCase keys, enums
 * as integers, 64-bit integers as decimal strings or numbers, bytes as hex. Unknown keys and
 * values of the wrong JSON type are rejected rather than ignored. (Hex bytes appear only in
 * exemplars' trace/span ids, which these exports do not carry; protobufjs would read them as base64.)
 */
export function decodeJson(body: string): DecodedRequest {
  const json: unknown = JSON.parse(body);
  checkMessage(ExportMetricsServiceRequest, json, '$');
  return ExportMetricsServiceRequest.toObject(ExportMetricsServiceRequest.fromObject(json as Record<string, unknown>), TO_OBJECT);
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function checkMessage(type: protobuf.Type, value: unknown, path: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${path}: expected an object for ${type.fullName}`);
  for (const [key, child] of Object.entries(value)) {
    const field = type.fields[key] ?? Object.values(type.fields).find((f) => f.name === key);
    if (field === undefined) throw new Error(`${path}.${key}: no such field in ${type.fullName}`);
    if (child === null) continue;
    if (field.repeated) {
      if (!Array.isArray(child)) throw new Error(`${path}.${key}: expected an array`);
      child.forEach((item, index) => checkField(field, item, `${path}.${key}[${index}]`));
    } else {
      checkField(field, child, `${path}.${key}`);
    }
  }
}

function checkField(field: protobuf.Field, value: unknown, path: string): void {
  field.resolve();
  const resolved = field.resolvedType;
  const fail = (expected: string): never => {
    throw new Error(`${path}: expected ${expected}, got ${JSON.stringify(value)}`);
  };
  if (resolved instanceof protobuf.Type) return checkMessage(resolved, value, path);
  if (resolved instanceof protobuf.Enum) {
    if (!Number.isInteger(value) || !Object.values(resolved.values).includes(value as number)) fail(`an integer value of ${resolved.fullName}`);
    return;
  }
  if (LONG_TYPES.has(field.type)) {
    const ok = (typeof value === 'string' && /^-?\d+$/.test(value)) || Number.isSafeInteger(value);
    if (!ok) fail('a 64-bit integer (decimal string or number)');
  } else if (INT_TYPES.has(field.type)) {
    if (!Number.isInteger(value)) fail('an integer');
  } else if (field.type === 'double' || field.type === 'float') {
    if (typeof value !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(value as string)) fail('a number');
  } else if (field.type === 'string') {
    if (typeof value !== 'string') fail('a string');
  } else if (field.type === 'bool') {
    if (typeof value !== 'boolean') fail('a boolean');
  } else if (field.type === 'bytes') {
    if (typeof value !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(value)) fail('hex-encoded bytes');
  }
}
