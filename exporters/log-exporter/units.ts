/**
 * UCUM units (as OpenTelemetry and the catalog spell them) as the readable words TorchServe's
 * metric log uses after the name (`QueueTime.Milliseconds:1|...`).
 */
const UNIT_WORDS: Readonly<Record<string, string>> = Object.freeze({
  '': 'Count',
  '1': 'Ratio',
  '%': 'Percent',
  ns: 'Nanoseconds',
  us: 'Microseconds',
  ms: 'Milliseconds',
  s: 'Seconds',
  min: 'Minutes',
  h: 'Hours',
  By: 'Bytes',
  KiBy: 'Kibibytes',
  MiBy: 'Mebibytes',
  GiBy: 'Gibibytes',
  KBy: 'Kilobytes',
  MBy: 'Megabytes',
  GBy: 'Gigabytes',
  bit: 'Bits',
  Hz: 'Hertz',
});

/**
 * `s` → `Seconds`, `By` → `Bytes`, `{token}` → `Tokens`, `{request}` → `Requests`, empty → `Count`.
 * Anything else keeps its letters and digits (other characters become `_`), so the word never
 * contains the `.`, `:` or `|` the line format splits on.
 */
export function unitWord(unit: string): string {
  const known = UNIT_WORDS[unit];
  if (known !== undefined) return known;
  const annotation = /^\{([^{}]+)\}$/.exec(unit);
  if (annotation !== null) {
    const word = (annotation[1] as string).replace(/[^a-zA-Z0-9]+/g, '_');
    const capitalised = `${word.charAt(0).toUpperCase()}${word.slice(1)}`;
    return capitalised.endsWith('s') ? capitalised : `${capitalised}s`;
  }
  const cleaned = unit.replace(/[^a-zA-Z0-9_]+/g, '_');
  return cleaned === '' || cleaned === '_' ? 'Count' : cleaned;
}
