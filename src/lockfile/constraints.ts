/**
 * Version constraints as a lock file records them. Terraform parses the configuration's constraints Ruby-style
 * (`constraints.ParseRubyStyleMulti`) and writes them in one canonical form (`getproviders.VersionConstraintsString`,
 * hashicorp/terraform: internal/getproviders/types.go): duplicates dropped, omitted version parts written as 0,
 * sorted by version then by operator (> >= = ~>(patch) ~>(minor) <= < !=), joined with ", ", `=` written as
 * nothing, a minor-only `~>` with two parts (`~> 2` is `~> 2.0`). The lock file parser expects that form, so
 * `--constraints` is rewritten into it. `provider lock check` also holds a locked version against constraints from
 * its policy file, as Terraform selects versions (`versionMeets`).
 */
import { compare, parse } from 'semver';
import { UsageError } from '../errors.js';

type Operator = '>' | '>=' | '=' | '~>patch' | '~>minor' | '<=' | '<' | '!=';

/** One selection: an operator and its boundary version. */
interface Selection {
  op: Operator;
  major: number;
  minor: number;
  patch: number;
  prerelease: string;
  metadata: string;
}

const PRIORITY: Record<Operator, number> = {
  '>': 1,
  '>=': 2,
  '=': 3,
  '~>patch': 4,
  '~>minor': 5,
  '<=': 6,
  '<': 7,
  '!=': 8,
};

const SYMBOL: Record<Operator, string> = {
  '>': '> ',
  '>=': '>= ',
  '=': '',
  '~>patch': '~> ',
  '~>minor': '~> ',
  '<=': '<= ',
  '<': '< ',
  '!=': '!= ',
};

const IDENT = '[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*';
const ONE = new RegExp(
  `^\\s*(~>|>=|<=|!=|>|<|=)?\\s*(\\d+)(?:\\.(\\d+))?(?:\\.(\\d+))?(?:-(${IDENT}))?(?:\\+(${IDENT}))?\\s*$`,
);

/** Parses a constraint string (`>= 1.2, < 2.0`, `~> 1.2`) into Terraform's canonical form; UsageError if it is not one. */
export function canonicalConstraints(input: string, flag = '--constraints'): string {
  const selections = parseSelections(input, flag);
  const unique = new Map(selections.map((s) => [key(s), s]));
  const sorted = [...unique.values()].sort(
    (a, b) => compareBoundary(a, b) || PRIORITY[a.op] - PRIORITY[b.op],
  );
  return sorted.map(render).join(', ');
}

/**
 * Whether `version` meets every selection of `constraints`, as Terraform selects provider versions
 * (apparentlymart/go-versions, which Terraform's `versions.MeetingConstraints` uses): `~> 1.2` is `>= 1.2.0,
 * < 2.0.0`, `~> 1.2.3` is `>= 1.2.3, < 1.3.0`, and a pre-release is selected only by a selection that names it
 * exactly (`= 2.0.0-beta.1`). `flag` names where the constraints come from in the UsageError of a bad one.
 */
export function versionMeets(version: string, constraints: string, flag: string): boolean {
  const selections = parseSelections(constraints, flag);
  const parsed = parse(version);
  if (parsed === null) return false;
  if (parsed.prerelease.length > 0) {
    const exact = selections.some((s) => s.op === '=' && compare(boundary(s), version) === 0);
    if (!exact) return false;
  }
  return selections.every((s) => meets(parsed.version, s));
}

function meets(version: string, s: Selection): boolean {
  const order = compare(version, boundary(s));
  switch (s.op) {
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '=':
      return order === 0;
    case '!=':
      return order !== 0;
    case '<=':
      return order <= 0;
    case '<':
      return order < 0;
    case '~>patch':
      return order >= 0 && compare(version, `${s.major}.${s.minor + 1}.0-0`) < 0;
    case '~>minor':
      return order >= 0 && compare(version, `${s.major + 1}.0.0-0`) < 0;
  }
}

// The selections of a constraint string, as written; UsageError naming `flag` when it is not one.
function parseSelections(input: string, flag: string): Selection[] {
  const fail = (why: string): UsageError =>
    new UsageError(`${flag} ${JSON.stringify(input)} is not a version constraint: ${why}`, {
      hint: 'Write it as in required_providers, e.g. "~> 1.2" or ">= 1.2.0, < 2.0.0".',
    });
  if (input.trim() === '') throw fail('it is empty');
  const selections: Selection[] = [];
  for (const part of input.split(',')) {
    const m = ONE.exec(part);
    if (m === null) throw fail(`${JSON.stringify(part.trim())} is not an operator and a version`);
    const [, symbol = '=', major = '0', minor, patch, prerelease = '', metadata = ''] = m;
    let op: Operator;
    if (symbol === '~>') op = patch === undefined ? '~>minor' : '~>patch';
    else op = symbol as Exclude<Operator, '~>patch' | '~>minor'>;
    selections.push({
      op,
      major: Number(major),
      minor: Number(minor ?? 0),
      patch: Number(patch ?? 0),
      prerelease,
      metadata,
    });
  }
  return selections;
}

function key(s: Selection): string {
  return `${s.op} ${s.major}.${s.minor}.${s.patch}-${s.prerelease}+${s.metadata}`;
}

// The version a selection is bounded by, without its build metadata.
function boundary(s: Selection): string {
  return `${s.major}.${s.minor}.${s.patch}${s.prerelease === '' ? '' : `-${s.prerelease}`}`;
}

function compareBoundary(a: Selection, b: Selection): number {
  const byVersion = compare(boundary(a), boundary(b));
  if (byVersion !== 0) return byVersion;
  return a.metadata < b.metadata ? -1 : a.metadata > b.metadata ? 1 : 0;
}

function render(s: Selection): string {
  const numbers = s.op === '~>minor' ? `${s.major}.${s.minor}` : `${s.major}.${s.minor}.${s.patch}`;
  return (
    SYMBOL[s.op] +
    numbers +
    (s.prerelease === '' ? '' : `-${s.prerelease}`) +
    (s.metadata === '' ? '' : `+${s.metadata}`)
  );
}
