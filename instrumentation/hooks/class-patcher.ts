/**
 * How a prototype chain defines `name`, read from property descriptors so that no getter of the
 * host's runs (an accessor read on the prototype runs with the prototype as `this`):
 * `method`: a function the hooks can patch on `owner`; `accessor`: a getter or setter, whose
 * functions the hooks never see; `locked`: a method on a prototype that refuses to be changed
 * (frozen, sealed or non-extensible: the patch table cannot be added; or the
 * property neither configurable nor writable).
 */
export type MethodDefinition = { readonly kind: 'method' | 'accessor' | 'locked'; readonly owner: object };

export function methodDefinition(prototype: object, name: string): MethodDefinition | undefined {
  for (let current: object | null = prototype; current !== null && current !== Object.prototype; current = Object.getPrototypeOf(current)) {
    const descriptor = Object.getOwnPropertyDescriptor(current, name);
    if (descriptor === undefined) continue;
    if (descriptor.get !== undefined || descriptor.set !== undefined) return { kind: 'accessor', owner: current };
    if (typeof descriptor.value !== 'function') return undefined;
    const changeable = Object.isExtensible(current) && (descriptor.configurable === true || descriptor.writable === true);
    return { kind: changeable ? 'method' : 'locked', owner: current };
  }
  return undefined;
}

/** Finds the object in a prototype chain that owns the method `name`, so a patch replaces the real definition. */
export function methodOwner(prototype: object, name: string): object | undefined {
  const definition = methodDefinition(prototype, name);
  return definition?.kind === 'method' ? definition.owner : undefined;
}

/** A class, as hosts hand them in: anything with a prototype. */
export type HostClass = { readonly prototype: object };
