/** Finds the object in a prototype chain that owns `name`, so a patch replaces the real definition. */
export function methodOwner(prototype: object, name: string): object | undefined {
  for (let current: object | null = prototype; current !== null && current !== Object.prototype; current = Object.getPrototypeOf(current)) {
    if (Object.prototype.hasOwnProperty.call(current, name)) {
      return typeof (current as Record<string, unknown>)[name] === 'function' ? current : undefined;
    }
  }
  return undefined;
}

/** A class, as hosts hand them in: anything with a prototype. */
export type HostClass = { readonly prototype: object };
