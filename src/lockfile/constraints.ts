/**
 * Version constraints as a lock file records them. Terraform parses the configuration's constraints Ruby-style
 * (`constraints.ParseRubyStyleMulti`) and writes them in one canonical form (`getproviders.VersionConstraintsString`,
 * hashicorp/terraform: internal/getproviders/types.go): duplicates dropped, omitted version parts written as 0,
 * sorted by version then by operator (> >= = ~>(patch) ~>(minor) <= < !=), joined with ", ", `=` written as
 * nothing, a minor-only `~>` with two parts (`~> 2` is `~> 2.0`). The lock file parser expects that form, so
 * `--constraints` is rewritten into it.
 */
import { compare } from 'semver';
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
  const unique = new Map(selections.map((s) => [key(s), s]));
  const sorted = [...unique.values()].sort(
    (a, b) => compareBoundary(a, b) || PRIORITY[a.op] - PRIORITY[b.op],
  );
  return sorted.map(render).join(', ');
}

function key(s: Selection): string {
  return `${s.op} ${s.major}.${s.minor}.${s.patch}-${s.prerelease}+${s.metadata}`;
}

function compareBoundary(a: Selection, b: Selection): number {
  const version = (s: Selection) =>
    `${s.major}.${s.minor}.${s.patch}${s.prerelease === '' ? '' : `-${s.prerelease}`}`;
  const byVersion = compare(version(a), version(b));
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
