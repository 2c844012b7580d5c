import * as http from 'node:http';

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface HttpGetOptions {
  /** Whole-request timeout (connect + response body). Default 10 000 ms. */
  timeoutMs?: number;
}

/**
 * Minimal dependency-free HTTP GET (plain http:// only). Resolves for any
 * status code; rejects only on network errors / timeout. Uses a fresh
 * connection per request (no keep-alive agent) so nothing lingers after a
 * test.
 */
export async function httpGet(url: string, headers: Record<string, string> = {}, options: HttpGetOptions = {}): Promise<HttpResponse> {
  const response = await httpGetBytes(url, headers, options);
  return { ...response, body: response.body.toString('utf8') };
}

/** `httpGet` with the body as bytes (a protobuf exposition, say). */
export function httpGetBytes(
  url: string,
  headers: Record<string, string> = {},
  options: HttpGetOptions = {},
): Promise<Omit<HttpResponse, 'body'> & { body: Buffer }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err);
    };
    const req = http.get(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
        });
      });
    });
    req.on('error', fail);
    const timer = setTimeout(() => fail(new Error(`httpGet ${url}: timed out after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
}
