import * as net from 'node:net';

/**
 * Ask the kernel for a currently-free TCP port on `host` (default 127.0.0.1)
 * by listening on port 0, reading the assigned port and closing again.
 *
 * There is an unavoidable race between closing and the caller binding the
 * port, so callers that hand the port to another process (e.g. Prometheus)
 * should retry with a fresh port if that process fails to bind.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ host, port: 0, exclusive: true }, () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error(`freePort: unexpected server address ${String(addr)}`));
        return;
      }
      const { port } = addr;
      srv.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}
