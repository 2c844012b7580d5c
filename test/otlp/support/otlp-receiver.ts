import * as grpc from '@grpc/grpc-js';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { OtlpProtocol } from '../../../exporters/otlp/types';
import { decodeJson, decodeProtobuf, ExportMetricsServiceResponse, METRICS_SERVICE_EXPORT_PATH, type DecodedRequest } from './otlp-proto';

/** One export request as the receiver saw it. */
export interface ReceivedExport {
  readonly protocol: OtlpProtocol;
  readonly contentType?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: DecodedRequest;
}

/** An OTLP metrics receiver on 127.0.0.1 (ephemeral port) that decodes with the official protos. */
export interface OtlpReceiver {
  readonly protocol: OtlpProtocol;
  /** What to configure the exporter with: the full `/v1/metrics` URL for HTTP, `http://host:port` for gRPC. */
  readonly endpoint: string;
  /** `http://127.0.0.1:port`: what `OTEL_EXPORTER_OTLP_ENDPOINT` would say. */
  readonly baseEndpoint: string;
  readonly requests: ReceivedExport[];
  /** Decoding failures (a request the official definitions reject); tests assert this stays empty. */
  readonly errors: Error[];
  /** Resolves once `count` requests arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedExport[]>;
  close(): Promise<void>;
}

export function startOtlpReceiver(protocol: OtlpProtocol): Promise<OtlpReceiver> {
  return protocol === 'grpc' ? startGrpcReceiver() : startHttpReceiver(protocol);
}

class Inbox {
  readonly requests: ReceivedExport[] = [];
  readonly errors: Error[] = [];
  private waiters: Array<() => void> = [];

  push(request: ReceivedExport): void {
    this.requests.push(request);
    for (const wake of this.waiters.splice(0)) wake();
  }

  waitFor(count: number, timeoutMs = 5000): Promise<ReceivedExport[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`expected ${count} OTLP requests within ${timeoutMs} ms, got ${this.requests.length}`)), timeoutMs);
      const check = (): void => {
        if (this.requests.length >= count) {
          clearTimeout(timer);
          resolve(this.requests.slice(0, count));
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }
}

async function startHttpReceiver(protocol: OtlpProtocol): Promise<OtlpReceiver> {
  const inbox = new Inbox();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        if (req.method !== 'POST' || req.url !== '/v1/metrics') throw new Error(`unexpected ${req.method} ${req.url}`);
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const contentType = req.headers['content-type'];
        const json = contentType?.startsWith('application/json') === true;
        if (!json && contentType !== 'application/x-protobuf') throw new Error(`unexpected content-type ${contentType}`);
        const decoded = json ? decodeJson(body.toString('utf8')) : decodeProtobuf(body);
        inbox.push({ protocol, contentType, headers: flatHeaders(req.headers), body: decoded });
        const response = ExportMetricsServiceResponse.create({});
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? JSON.stringify(ExportMetricsServiceResponse.toObject(response)) : ExportMetricsServiceResponse.encode(response).finish());
      } catch (error) {
        inbox.errors.push(error as Error);
        res.writeHead(400).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    protocol,
    endpoint: `http://127.0.0.1:${port}/v1/metrics`,
    baseEndpoint: `http://127.0.0.1:${port}`,
    requests: inbox.requests,
    errors: inbox.errors,
    waitForRequests: (count, timeoutMs) => inbox.waitFor(count, timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function startGrpcReceiver(): Promise<OtlpReceiver> {
  const inbox = new Inbox();
  const server = new grpc.Server();
  const identity = (buffer: Buffer): Buffer => buffer;
  server.addService(
    {
      Export: {
        path: METRICS_SERVICE_EXPORT_PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        try {
          const headers: Record<string, string> = {};
          for (const [key, value] of Object.entries(call.metadata.getMap())) headers[key] = String(value);
          inbox.push({ protocol: 'grpc', headers, body: decodeProtobuf(call.request) });
          callback(null, Buffer.from(ExportMetricsServiceResponse.encode(ExportMetricsServiceResponse.create({})).finish()));
        } catch (error) {
          inbox.errors.push(error as Error);
          callback({ code: grpc.status.INVALID_ARGUMENT, details: String(error) });
        }
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, boundPort) => (error ? reject(error) : resolve(boundPort))),
  );
  return {
    protocol: 'grpc',
    endpoint: `http://127.0.0.1:${port}`,
    baseEndpoint: `http://127.0.0.1:${port}`,
    requests: inbox.requests,
    errors: inbox.errors,
    waitForRequests: (count, timeoutMs) => inbox.waitFor(count, timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // A client that keeps its channel open must not hold the test up.
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 500).unref();
      }),
  };
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) if (value !== undefined) result[key] = Array.isArray(value) ? value.join(', ') : value;
  return result;
}
