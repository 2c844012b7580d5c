import { get } from 'node:http';

/** GETs `url` over a fresh connection and resolves with the body's length on the wire. */
export function httpGet(url: string, gzip: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => (response.statusCode === 200 ? resolve(bytes) : reject(new Error(`${url}: HTTP ${String(response.statusCode)}`))));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}
