import { checkArray, checkString, OmniOptionError } from '../common/option-checks';

/** More stages than any pipeline has: the info family stays a handful of series. */
export const MAX_STAGE_NAMES = 256;

/**
 * The `stageNames` option checked: one non-empty name per stage id, in stage order (index 0 is
 * stage 0), at least one for each of the `stages` stagePools declares (more name stages whose
 * replicas join later). Empty when the option is absent.
 */
export function resolveStageNames(value: unknown, stages: number): readonly string[] {
  checkArray(value, 'stageNames');
  if (value === undefined) return [];
  if (value.length > MAX_STAGE_NAMES) throw new OmniOptionError('stageNames', `stageNames has ${value.length} entries; at most ${MAX_STAGE_NAMES}`);
  value.forEach((name, stage) => checkString(name, `stageNames[${stage}]`));
  // A hole reads as undefined, which checkString lets through as "not given".
  const missing = Array.from(value, (name) => name).findIndex((name) => name === undefined);
  if (missing >= 0) throw new OmniOptionError(`stageNames[${missing}]`, `stageNames[${missing}] must be a non-empty string (the name of stage ${missing})`);
  if (value.length > 0 && value.length < stages) {
    throw new OmniOptionError(
      'stageNames',
      `stageNames names ${value.length} stage(s) but stagePools has ${stages}: give every stage a name, in stage order (stage ${value.length} has none)`,
    );
  }
  return [...(value as readonly string[])];
}
