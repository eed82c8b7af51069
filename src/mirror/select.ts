/**
 * What to mirror: the providers named on the command line, the versions `--versions` selects (Terraform's
 * constraint syntax, read by the lock file's parser into its canonical form; default the latest release), and
 * the platforms `--platforms` keeps. A pre-release is selected only by an exact `=` constraint, as in Terraform.
 */
import { compare, parse, valid } from 'semver';
import { UsageError } from '../errors.js';
import { canonicalConstraints } from '../lockfile/constraints.js';
import { comparePlatforms, parsePlatformName, platformName, type PlatformKey } from '../terraform/names.js';
import type { OriginProvider } from './origin.js';

const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/i;

/** `<namespace>/<type>` arguments; UsageError naming the bad one. */
export function parseProviders(args: readonly string[]): OriginProvider[] {
  if (args.length === 0) {
    throw new UsageError('Name at least one provider to mirror, as <namespace>/<type>', {
      hint: 'For example: provider mirror hashicorp/random --to-dir ./mirror (or list them in a file: --manifest mirror.yaml)',
    });
  }
  const seen = new Set<string>();
  const out: OriginProvider[] = [];
  for (const arg of args) {
    const [namespace = '', type = '', ...rest] = arg.split('/');
    if (rest.length > 0 || !NAME.test(namespace) || !NAME.test(type)) {
      throw new UsageError(`${JSON.stringify(arg)} is not a provider address <namespace>/<type>`, {
        hint: 'Write it as in required_providers without the host, e.g. hashicorp/random; the origin is --from.',
      });
    }
    const key = `${namespace}/${type}`.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ namespace: namespace.toLowerCase(), type: type.toLowerCase() });
  }
  return out;
}

/**
 * `--platforms linux_amd64,darwin_arm64` (or a manifest entry's list, `where` naming it), sorted; undefined
 * without the flag (every platform).
 */
export function parsePlatforms(
  text: string | readonly string[] | undefined,
  where = '--platforms',
): PlatformKey[] | undefined {
  if (text === undefined) return undefined;
  const parts = (typeof text === 'string' ? text.split(',') : text)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) {
    throw new UsageError(`${where} is empty`, {
      hint: 'Give os_arch pairs: --platforms linux_amd64,darwin_arm64',
    });
  }
  const list = new Map<string, PlatformKey>();
  for (const part of parts) {
    const platform = parsePlatformName(part);
    if (platform === undefined) {
      throw new UsageError(`${where}: ${JSON.stringify(part)} is not an os_arch pair`, {
        hint: 'Give os_arch pairs as Go names them: --platforms linux_amd64,darwin_arm64',
      });
    }
    list.set(platformName(platform), platform);
  }
  return [...list.values()].sort(comparePlatforms);
}

/** Chooses versions from a list: the constraints' matches, or the latest release without constraints. */
export type VersionSelector = (versions: readonly string[]) => string[];

/**
 * `--versions`, parsed now (a bad constraint is a UsageError before any request; `where` names it). With
 * `latest` (a manifest's `latest: N`), only the newest N of what it selects; without constraints, the newest
 * release (or N of them).
 */
export function versionSelector(
  text: string | undefined,
  options: { latest?: number | undefined; where?: string } = {},
): VersionSelector {
  const { latest } = options;
  const newest = (chosen: string[]): string[] => (latest === undefined ? chosen : chosen.slice(-latest));
  if (text === undefined) {
    return (versions) => {
      const releases = sortVersions(versions).filter((v) => parse(v)?.prerelease.length === 0);
      return releases.slice(-(latest ?? 1));
    };
  }
  const canonical = canonicalConstraints(text, options.where ?? '--versions');
  const tests = canonical.split(', ').map(constraintTest);
  return (versions) =>
    newest(
      sortVersions(versions).filter((v) => tests.every((t) => t.matches(v)) && releaseOrPinned(v, tests)),
    );
}

interface ConstraintTest {
  exact: string | undefined;
  matches: (version: string) => boolean;
}

/** One canonical constraint (`>= 1.2.0`, `~> 1.2`, `~> 1.2.3`, `1.2.3`, `!= 1.2.3`) as a test. */
function constraintTest(constraint: string): ConstraintTest {
  const [, op = '', boundary = ''] = /^(>=|<=|!=|~>|>|<)?\s*(\S+)$/.exec(constraint) ?? [];
  const parts = boundary.split(/[-+]/)[0]!.split('.');
  const full = boundary.split('.').length === 2 && op === '~>' ? `${boundary}.0` : boundary;
  const cmp = (v: string): number => compare(v, full);
  switch (op) {
    case '>':
      return { exact: undefined, matches: (v) => cmp(v) > 0 };
    case '>=':
      return { exact: undefined, matches: (v) => cmp(v) >= 0 };
    case '<':
      return { exact: undefined, matches: (v) => cmp(v) < 0 };
    case '<=':
      return { exact: undefined, matches: (v) => cmp(v) <= 0 };
    case '!=':
      return { exact: undefined, matches: (v) => cmp(v) !== 0 };
    case '~>': {
      // `~> 1.2` allows 1.x from 1.2.0; `~> 1.2.3` allows 1.2.x from 1.2.3.
      const [major = 0, minor = 0] = parts.map(Number);
      const upper = parts.length === 2 ? `${major + 1}.0.0` : `${major}.${minor + 1}.0`;
      return { exact: undefined, matches: (v) => cmp(v) >= 0 && compare(v, upper) < 0 };
    }
    default:
      return { exact: full, matches: (v) => cmp(v) === 0 };
  }
}

/** A pre-release passes only when a constraint names it exactly. */
function releaseOrPinned(version: string, tests: ConstraintTest[]): boolean {
  if (parse(version)?.prerelease.length === 0) return true;
  return tests.some((t) => t.exact !== undefined && compare(version, t.exact) === 0);
}

/** The semantic versions of a list, oldest first; anything else is left out. */
function sortVersions(versions: readonly string[]): string[] {
  return [...new Set(versions.filter((v) => valid(v) === v))].sort(compare);
}
