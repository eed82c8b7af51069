/**
 * What counts as a provider version on the wire: a strict semantic version (semver.org 2.0.0), pre-release and
 * build metadata allowed, no leading `v` or `=`. Parsed by the `semver` package, not by a hand-written pattern.
 */
import semverParse from 'semver/functions/parse.js';

/** True for a strict semantic version written exactly as semver.org defines it. */
export function isStrictSemver(text: string): boolean {
  if (!/^\d/.test(text)) return false;
  const parsed = semverParse(text, { loose: false });
  return parsed !== null && parsed.raw === text;
}
