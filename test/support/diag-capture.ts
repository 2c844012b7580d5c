import { diag, DiagLogLevel } from '@opentelemetry/api';

/** The diag warnings logged from now on (a logger installed at warn level), until `stop()` removes it. */
export function captureWarnings(): { readonly warnings: string[]; stop(): void } {
  const warnings: string[] = [];
  const none = (): void => undefined;
  diag.setLogger({ error: none, warn: (message: string) => warnings.push(message), info: none, debug: none, verbose: none }, DiagLogLevel.WARN);
  return { warnings, stop: () => diag.disable() };
}
