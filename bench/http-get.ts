import { get, type IncomingMessage } from 'node:http';
import { get as getTls } from 'node:https';

/** GETs `url` over a fresh connection and resolves with the body's length on the wire; over https any certificate is accepted (the test one). */
export function httpGet(url: string, gzip: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const respond = (response: IncomingMessage): void => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => (response.statusCode === 200 ? resolve(bytes) : reject(new Error(`${url}: HTTP ${String(response.statusCode)}`))));
      response.on('error', reject);
    };
    const options = { agent: false as const, headers: gzip ? { 'accept-encoding': 'gzip' } : {} };
    const request = url.startsWith('https:') ? getTls(url, { ...options, rejectUnauthorized: false }, respond) : get(url, options, respond);
    request.on('error', reject);
  });
}
