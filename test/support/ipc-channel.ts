/**
 * Runs `body` as a process without an IPC channel runs it. A worker of `mocha --parallel` has the
 * channel its runner talks over; a test of what a process started otherwise than by
 * `cluster.fork()` is refused must not see it (nor send anything over it).
 */
export function withoutIpcChannel<T>(body: () => T): T {
  const send = Object.getOwnPropertyDescriptor(process, 'send');
  if (send === undefined) return body();
  Object.defineProperty(process, 'send', { value: undefined, configurable: true, writable: true });
  try {
    return body();
  } finally {
    Object.defineProperty(process, 'send', send);
  }
}
