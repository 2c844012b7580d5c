import { packageDiag } from '../../views/common/package-diag';
import { OmniOptionError, shown } from '../../views/common/option-checks';
import { methodDefinition, methodOwner } from './class-patcher';
import { ORCHESTRATOR_METHODS, SERVING_METHODS } from './host-wrappers';

/** What each class option is patched for: the methods the hooks wrap on its prototype. */
const HOST_METHODS = {
  orchestratorClass: ORCHESTRATOR_METHODS,
  servingClass: SERVING_METHODS,
} as const;

export type ClassOption = keyof typeof HOST_METHODS;

/**
 * Refuses a class option that could never be patched, naming it: an instance where the class goes
 * (`orchestratorClass: new Orchestrator()`), a class none of whose prototype methods is a host
 * method (nothing would ever be observed, and the self-check would only say so much later), or a
 * host method defined in a way the hooks cannot patch (an accessor, a locked prototype).
 */
export function checkHostClasses(config: Partial<Record<ClassOption, unknown>>): void {
  for (const option of Object.keys(HOST_METHODS) as ClassOption[]) checkHostClass(config[option], option);
}

interface HookSources extends Partial<Record<ClassOption, unknown>> {
  readonly modules?: readonly unknown[];
  readonly diagnosticsChannels?: boolean;
}

/**
 * Warns, at construction, about an instrumentation given nothing to hook: no host class, no
 * module. It then hears only a host that publishes on the diagnostics channels, which a host
 * says by passing `diagnosticsChannels: true`; otherwise the first sign would be empty families
 * much later.
 */
export function warnWhenNothingToHook(config: HookSources): void {
  if (config.orchestratorClass !== undefined || config.servingClass !== undefined || (config.modules?.length ?? 0) > 0) return;
  if (config.diagnosticsChannels === true) return;
  const hears =
    config.diagnosticsChannels === false
      ? 'with diagnosticsChannels off it hears nothing'
      : 'it only hears a host that publishes on the OMNI_CHANNELS diagnostics channels (pass diagnosticsChannels: true if that is the plan)';
  packageDiag.warn(
    `omni-otel-metrics: OmniInstrumentation was given no host classes: pass orchestratorClass / servingClass (the host's orchestrator and serving classes, or modules to patch them when loaded); ${hears}`,
  );
}

function checkHostClass(value: unknown, option: ClassOption): void {
  if (value === undefined) return;
  const prototype = typeof value === 'function' || (typeof value === 'object' && value !== null) ? (value as { prototype?: unknown }).prototype : undefined;
  if (typeof prototype !== 'object' || prototype === null) {
    const instanceOf = instanceClassName(value);
    throw new OmniOptionError(
      option,
      instanceOf === undefined
        ? `${option} must be the host's class (its prototype is patched); got ${shown(value)}`
        : `${option} must be the class itself, not an instance: pass ${instanceOf}, not new ${instanceOf}()`,
    );
  }
  const methods = HOST_METHODS[option];
  for (const name of methods) checkPatchable(prototype, name, option, value);
  if (methods.some((name) => methodOwner(prototype, name) !== undefined)) return;
  throw new OmniOptionError(
    option,
    `${option} ${className(value)} has none of the methods the hooks patch (${methods.join(', ')}) on its prototype; ` +
      'pass the class that defines them (methods assigned in the constructor or as arrow-function fields cannot be patched)',
  );
}

/**
 * Refuses a host method the hooks could not patch, rather than leave its calls silently uncounted.
 */
function checkPatchable(prototype: object, name: string, option: ClassOption, value: unknown): void {
  const reason = unpatchableMethod(prototype, name, option, className(value));
  if (reason !== undefined) throw new OmniOptionError(option, reason);
}

/**
 * Why the hooks cannot patch the host method `name`, if they cannot: an accessor (its getter hands
 * out functions the hooks never see, and may work only on an instance), or a method on a
 * prototype that refuses changes.
 */
export function unpatchableMethod(prototype: object, name: string, option: ClassOption, hostClassName: string): string | undefined {
  const definition = methodDefinition(prototype, name);
  if (definition?.kind === 'accessor') {
    return (
      `${option} ${hostClassName} defines ${name} as an accessor (get ${name}(), as autobind decorators do), which the hooks cannot patch: ` +
      `define ${name} as a plain method (bind it in the constructor if it must be bound: this.${name} = this.${name}.bind(this)), ` +
      `or publish its calls on OMNI_CHANNELS and leave ${option} unset`
    );
  }
  if (definition?.kind === 'locked') {
    return (
      `${option} ${hostClassName}'s prototype refuses changes to ${name} (frozen, sealed or non-extensible), so the hooks cannot patch it: ` +
      `leave the prototype open to changes, or publish its calls on OMNI_CHANNELS and leave ${option} unset`
    );
  }
  return undefined;
}

/** The class name of an instance, when it is one of a named class other than Object. */
function instanceClassName(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const name: unknown = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : undefined;
}

export function className(value: unknown): string {
  const name = (value as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : '(anonymous class)';
}
