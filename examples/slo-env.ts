import { SLO_OBJECTIVES, type SloOptions } from 'omni-otel-metrics';

/**
 * The objectives `npm start` declares (`slo`) and `npm run load` judges its own requests by, one
 * variable each; unset or empty declares none.
 */
export const SLO_VARIABLES = {
  SLO_FIRST_OUTPUT_SECONDS: ['firstOutputSeconds', 'seconds from arrival to the first output (text or audio)'],
  SLO_E2E_SECONDS: ['e2eSeconds', 'seconds from arrival to the finished answer'],
  SLO_TPOT_SECONDS: ['tpotSeconds', 'seconds per output token after the first, (e2e - first output) / (tokens - 1)'],
  SLO_AUDIO_TTFP_SECONDS: ['audioTtfpSeconds', 'seconds from arrival to the first audio packet (spoken answers)'],
  SLO_AUDIO_RTF: ['audioRtf', 'real-time factor of the audio (spoken answers)'],
} as const satisfies Readonly<Record<string, readonly [keyof SloOptions, string]>>;

/** The `slo` option from the `SLO_*` variables, or undefined when none is set; throws naming a variable that is not a number above 0. */
export function sloFromEnv(env: NodeJS.ProcessEnv): SloOptions | undefined {
  const slo: Partial<Record<keyof SloOptions, number>> = {};
  for (const [variable, [key]] of Object.entries(SLO_VARIABLES)) {
    const text = env[variable]?.trim();
    if (text === undefined || text === '') continue;
    const value = Number(text);
    if (!/^\d*\.?\d+(e[+-]?\d+)?$/i.test(text) || !(value > 0) || !Number.isFinite(value)) {
      throw new RangeError(`${variable} must be a number above 0; got "${env[variable] ?? ''}"`);
    }
    slo[key] = value;
  }
  return Object.keys(slo).length === 0 ? undefined : slo;
}

/** `e2e ≤ 5 s, audio_rtf ≤ 0.8`: the declared objectives, as the startup line and the load summary print them. */
export function describeSlo(slo: SloOptions): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(slo) as Array<[keyof SloOptions, number | undefined]>) {
    if (value !== undefined) parts.push(`${SLO_OBJECTIVES[key]} ≤ ${value}${key === 'audioRtf' ? '' : ' s'}`);
  }
  return parts.join(', ');
}
