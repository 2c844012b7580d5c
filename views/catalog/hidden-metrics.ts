import type { FamilyDefinition } from './family-definition';

/** The vLLM release whose metrics the catalog matches; `--show-hidden-metrics-for-version` is judged against it. */
export const MATCHED_VLLM_VERSION = { major: 0, minor: 32 } as const;

/**
 * vLLM's `version._prev_minor_version_was(version_str)`, the running release being the matched
 * one: the string must be exactly the previous minor release (`'0.31'`, not `'0.31.0'`).
 */
export function isPreviousMinorRelease(version: string): boolean {
  return version === `${MATCHED_VLLM_VERSION.major}.${MATCHED_VLLM_VERSION.minor - 1}`;
}

/**
 * Whether vLLM at the matched release, started with `--show-hidden-metrics-for-version <version>`,
 * prints a hidden family. A release keeps the code of the families it hid (`if
 * self.show_hidden_metrics:`) and the next one deletes it, so only a family hidden in the matched
 * release itself can still be shown, and only for the minor release before it.
 */
export function shownForHiddenVersion(family: Pick<FamilyDefinition, 'hiddenIn'>, version: string): boolean {
  return family.hiddenIn === `${MATCHED_VLLM_VERSION.major}.${MATCHED_VLLM_VERSION.minor}` && isPreviousMinorRelease(version);
}
