import { readFileSync } from 'node:fs';
import { customExposedName, resolveFullCatalog, type CustomFamily, type ResolvedCatalog } from './catalog';
import type { FamilyType } from './family-definition';
import { LABEL_NAME_PATTERN, METRIC_NAME_PATTERN, type PipelinePrefix } from './names';
import { findPrintedNameClash, TARGET_INFO_FAMILY, type PrintedFamily } from './printed-names';
import { isWellFormedText } from '../common/well-formed-text';

/**
 * The one documented path for changing families, in the spirit of TorchServe's `metrics.yaml`:
 *
 * ```yaml
 * buckets:                      # override a histogram's bounds, by exposed name
 *   vllm:e2e_request_latency_seconds: [0.5, 1, 2, 5, 10, 30]
 * families:                     # add families of your own
 *   - name: myapp:tts_cache_hits_total
 *     type: counter
 *     help: TTS cache hits.
 *     labels: [model_name, stage, replica]
 * ```
 */
export interface MetricsConfig {
  readonly buckets: Readonly<Record<string, readonly number[]>>;
  readonly customFamilies: readonly CustomFamily[];
}

/** Thrown when the `configFile` cannot be read or a family in it is not valid; the message names the file and the family. */
export class MetricsConfigError extends Error {
  /** Always `MetricsConfigError`. */
  override readonly name = 'MetricsConfigError';
}

const FAMILY_TYPES: readonly FamilyType[] = ['counter', 'gauge', 'histogram'];

/** Reads and validates a YAML or JSON config file; any problem throws naming the file and family. */
export function loadMetricsConfig(file: string, prefix?: PipelinePrefix): MetricsConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new MetricsConfigError(`${file}: cannot read metrics config (${(error as Error).message})`);
  }
  let document: unknown;
  try {
    document = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new MetricsConfigError(`${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'} (${(error as Error).message})`);
  }
  return validateMetricsConfig(document ?? {}, file, prefix);
}

/** Validates an already-parsed config; `source` names it in error messages. */
export function validateMetricsConfig(document: unknown, source: string, prefix?: PipelinePrefix): MetricsConfig {
  const fail = (problem: string): never => {
    throw new MetricsConfigError(`${source}: ${problem}`);
  };
  if (!isRecord(document)) fail('the top level must be a mapping with "buckets" and/or "families"');
  const root = document as Record<string, unknown>;
  for (const key of Object.keys(root)) {
    if (key !== 'buckets' && key !== 'families') fail(`unknown top-level key "${key}" (expected "buckets" or "families")`);
  }

  const known = resolveFullCatalog({ prefix });
  const customFamilies = parseFamilies(root.families, fail);
  refuseNameClashes(customFamilies, known, fail);
  const buckets: Record<string, readonly number[]> = {};
  if (root.buckets !== undefined) {
    if (!isRecord(root.buckets)) fail('"buckets" must map family names to lists of bounds');
    for (const [name, bounds] of Object.entries(root.buckets as Record<string, unknown>)) {
      const family = known.byName(name) ?? customFamilies.find((f) => f.name === name);
      if (family === undefined) fail(`family "${name}": unknown family (bucket overrides take exposed names such as vllm:e2e_request_latency_seconds)`);
      if (family?.type !== 'histogram') fail(`family "${name}": is a ${family?.type ?? ''}, only histograms have buckets`);
      buckets[name] = validateBounds(bounds, (problem) => fail(`family "${name}": ${problem}`));
    }
  }
  return { buckets, customFamilies };
}

function parseFamilies(value: unknown, fail: (problem: string) => never): CustomFamily[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail('"families" must be a list');
  return (value as unknown[]).map((entry, index) => {
    if (!isRecord(entry)) fail(`families[${index}]: must be a mapping`);
    const raw = entry as Record<string, unknown>;
    const name = raw.name;
    if (typeof name !== 'string' || !METRIC_NAME_PATTERN.test(name)) {
      fail(`families[${index}]: invalid name ${JSON.stringify(name)} (must match ${METRIC_NAME_PATTERN.source})`);
    }
    const at = (problem: string): never => fail(`family "${String(name)}": ${problem}`);
    if (name.startsWith('vllm:') || name.startsWith('vllm_omni:')) at('the vllm: and vllm_omni: namespaces belong to the catalog');
    const type = raw.type as FamilyType;
    if (!FAMILY_TYPES.includes(type)) at(`invalid type ${JSON.stringify(raw.type)} (expected ${FAMILY_TYPES.join(', ')})`);
    if (typeof raw.help !== 'string' || raw.help.trim() === '') at('help must be a non-empty string');
    const lineBreak = LINE_BREAKING.exec(raw.help as string);
    if (lineBreak !== null) {
      at(`help contains ${JSON.stringify(lineBreak[0])}, which readers of the exposition take for a line break (a newline is fine: it is printed escaped)`);
    }
    if (!isWellFormedText(raw.help as string)) at('help contains a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot encode');
    if (typeof raw.unit === 'string' && !isWellFormedText(raw.unit)) at('unit contains a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot encode');
    const labels = raw.labels ?? [];
    if (!Array.isArray(labels)) at('labels must be a list of label names');
    for (const label of labels as unknown[]) {
      if (typeof label !== 'string' || !LABEL_NAME_PATTERN.test(label) || label.startsWith('__') || label === 'le') {
        at(`invalid label name ${JSON.stringify(label)}`);
      }
    }
    if (new Set(labels as string[]).size !== (labels as string[]).length) at('labels must not repeat');
    const family: CustomFamily = {
      name,
      type,
      help: raw.help as string,
      labels: labels as string[],
      unit: typeof raw.unit === 'string' ? raw.unit : undefined,
      buckets: type === 'histogram' ? validateBounds(raw.buckets, at) : raw.buckets === undefined ? undefined : at('only histograms have buckets'),
    };
    return family;
  });
}

/**
 * Characters a HELP line cannot carry: the text formats escape only `\\n`, and Python's readers
 * split lines at `\r` (universal newlines) and at the other breaks of `str.splitlines`. Control
 * characters other than tab and newline are refused with them.
 */
// eslint-disable-next-line no-control-regex
const LINE_BREAKING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Refuses a custom family that would print a name another family prints (the catalog's, the
 * process and runtime families', `target_info`, or another custom family's): the exposition
 * would then hold two HELP lines for one name, or samples a parser files under the wrong family.
 */
function refuseNameClashes(customFamilies: readonly CustomFamily[], known: ResolvedCatalog, fail: (problem: string) => never): void {
  interface Owner extends PrintedFamily {
    readonly label: string;
  }
  const owners: Owner[] = [
    { ...TARGET_INFO_FAMILY, label: `the ${TARGET_INFO_FAMILY.name} family` },
    ...known.families.map((family) => ({ name: family.name, kind: family.type, label: `the package's family "${family.name}" (${family.type})` })),
    ...customFamilies.map((family) => ({ name: customExposedName(family), kind: family.type, label: `family "${family.name}" (${family.type})` })),
  ];
  const clash = findPrintedNameClash(owners);
  if (clash === undefined) return;
  const what =
    clash.first.name === clash.second.name
      ? `both are exposed as ${clash.first.name}`
      : `both print ${clash.printedName} (exposed as ${clash.first.name} and ${clash.second.name})`;
  fail(`${clash.second.label} clashes with ${clash.first.label}: ${what}`);
}

function validateBounds(value: unknown, fail: (problem: string) => never): number[] {
  if (!Array.isArray(value) || value.length === 0) fail('buckets must be a non-empty list of numbers');
  const bounds = value as unknown[];
  bounds.forEach((bound, i) => {
    if (typeof bound !== 'number' || !Number.isFinite(bound)) fail(`bucket ${i} is ${JSON.stringify(bound)}, not a finite number`);
    if (i > 0 && (bound as number) <= (bounds[i - 1] as number)) fail('buckets must be sorted in strictly increasing order');
  });
  return bounds as number[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The YAML parser loads with the first YAML config file: most pipelines have none. */
function parseYaml(text: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when first needed, which an import cannot
  return (require('yaml') as typeof import('yaml')).parse(text);
}
