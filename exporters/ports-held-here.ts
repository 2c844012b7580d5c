/**
 * Ports this process's own `/metrics` servers listen on, so a second registration on the same
 * port hears that its own earlier handle holds it, rather than a guess about another server.
 * A count per port: servers on one port at different addresses each hold it.
 */
const held = new Map<number, number>();

export function holdPort(port: number): void {
  held.set(port, (held.get(port) ?? 0) + 1);
}

export function releasePort(port: number): void {
  const count = held.get(port) ?? 0;
  if (count <= 1) held.delete(port);
  else held.set(port, count - 1);
}

/** Whether one of this process's `/metrics` servers listens on the port now. */
export function portHeldHere(port: number): boolean {
  return held.has(port);
}
