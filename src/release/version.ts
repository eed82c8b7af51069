/**
 * Provider versions are strict semantic versions (semver.org 2.0.0), pre-releases allowed. A single leading
 * `v` is accepted and dropped, as git tags usually carry one and goreleaser's `{{ .Version }}` drops it too.
 */
import { UsageError } from '../errors.js';
import { isStrictSemver } from '../terraform/names.js';

/** The version without its leading `v` when it is strict semver; undefined otherwise. */
export function normalizeVersion(input: string): string | undefined {
  const text = input.startsWith('v') ? input.slice(1) : input;
  return isStrictSemver(text) ? text : undefined;
}

/** `--version` as given on the command line: strict semver (a leading `v` dropped) or a UsageError. */
export function parseVersionFlag(input: string): string {
  const version = normalizeVersion(input.trim());
  if (version === undefined) {
    throw new UsageError(`--version "${input}" is not a semantic version`, {
      hint: 'Give it as MAJOR.MINOR.PATCH with an optional pre-release, such as 1.2.3 or v2.0.0-beta.1.',
    });
  }
  return version;
}
