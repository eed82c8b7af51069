/**
 * The policy `provider lock check` holds a lock file to, besides what the private registry serves: which providers
 * from elsewhere it admits (`host/namespace/type` patterns, `*` standing for any run of characters within one
 * part), which platforms runs need an `h1:` for, and which versions of a provider may be locked (constraints
 * written as in `required_providers`). It comes from the flags (`--allow`, `--platform`) and from a policy file,
 * YAML (JSON is YAML too) checked field by field:
 *
 *     allow: ["registry.terraform.io/hashicorp/*"]
 *     platforms: [linux_amd64, darwin_arm64]
 *     providers:
 *       "app.terraform.io/example-org/*": { versions: "~> 1.2" }
 *
 * Unknown fields are errors: a misspelled `allow` must not admit nothing silently, nor a misspelled `versions`
 * check nothing.
 */
import * as path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { readRegularCapped, SMALL_FILE_CAPS } from '../release/smallFile.js';
import { canonicalConstraints } from './constraints.js';

/** The platform runs need an `h1:` for when none is named: HCP Terraform's workers run on linux_amd64. */
export const DEFAULT_RUN_PLATFORMS = ['linux_amd64'];

/** Version constraints for the providers a pattern matches. */
export interface ProviderRule {
  pattern: string;
  /** Canonical constraints the locked version must meet. */
  versions: string;
}

/** What a lock file is held to besides the registry. */
export interface LockPolicy {
  /** Patterns of providers admitted from elsewhere than the private registry. */
  allow: string[];
  /** Platforms whose `h1:` every privately served provider's block must hold. */
  platforms: string[];
  providers: ProviderRule[];
}

const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;

const policySchema = z.strictObject({
  allow: z.array(z.string()).optional(),
  platforms: z.array(z.string().regex(PLATFORM, 'a platform is <os>_<arch>, e.g. linux_amd64')).optional(),
  providers: z.record(z.string(), z.strictObject({ versions: z.string() })).optional(),
});

/** Parses the policy file's text; UsageError (exit 2) naming the file and the field that is wrong. */
export function parsePolicy(text: string, file: string): LockPolicy {
  const fail = (why: string): UsageError =>
    new UsageError(`Invalid policy file ${file}: ${why}`, {
      hint: 'Write it as docs/supply-chain.md shows: allow (a list of host/namespace/type patterns), platforms (a list of <os>_<arch>) and providers (pattern → { versions: "<constraints>" }).',
      details: { file },
    });
  const document = readYaml(text, fail);
  const parsed = policySchema.safeParse(document ?? {});
  if (!parsed.success) {
    // A misspelled field says so first: its value's own complaint would hide the misspelling.
    const { issues } = parsed.error;
    const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
    const where = issue.path.length === 0 ? 'the document' : issue.path.join('.');
    const unknown = issue.code === 'unrecognized_keys' ? ` (unknown field ${issue.keys.join(', ')})` : '';
    throw fail(`${where}: ${issue.message}${unknown}`);
  }
  const { allow = [], platforms = [], providers = {} } = parsed.data;
  return {
    allow: allow.map((p) => checkPattern(p, `allow in ${file}`)),
    platforms,
    providers: Object.entries(providers).map(([pattern, rule]) => ({
      pattern: checkPattern(pattern, `providers in ${file}`),
      versions: canonicalConstraints(rule.versions, `providers."${pattern}".versions in ${file}`),
    })),
  };
}

/**
 * The policy file's YAML as data. A syntax error, and a warning (an unknown tag, which would otherwise be read as
 * a plain string), name their line; aliases that stand for more than the yaml package's `maxAliasCount` (100)
 * allows, a billion strings from a few lines, are refused before they are expanded.
 */
function readYaml(text: string, fail: (why: string) => UsageError): unknown {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem !== undefined) {
    const line = lines.linePos(problem.pos[0]).line;
    const message = problem.message.split('\n')[0];
    throw fail(
      problem.name === 'YAMLParseError'
        ? `it is not YAML (line ${line}: ${message})`
        : `line ${line}: ${message}`,
    );
  }
  try {
    return document.toJS();
  } catch (error) {
    const message = (error as Error).message.split('\n')[0];
    throw fail(
      /^Excessive alias count/.test(message ?? '')
        ? `its aliases stand for more than the YAML reader allows (an alias bomb?): ${message}`
        : `it is not YAML (${message})`,
    );
  }
}

/** Reads and parses the policy file `given` (relative to `cwd`): a regular file of at most 1 MiB. */
export async function readPolicyFile(given: string, cwd: string): Promise<LockPolicy> {
  let bytes: Buffer;
  try {
    ({ bytes } = await readRegularCapped(path.resolve(cwd, given), SMALL_FILE_CAPS.key));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`The policy file ${given} cannot be read (${code ?? (error as Error).message})`, {
      hint: 'Give --policy the path of a YAML policy file (docs/supply-chain.md shows one).',
      details: { file: given },
      cause: error,
    });
  }
  return parsePolicy(bytes.toString('utf8'), given);
}

/** A provider pattern checked: three parts, `host/namespace/type`, none empty; lower-cased. UsageError otherwise. */
export function checkPattern(pattern: string, where: string): string {
  const parts = pattern.trim().split('/');
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw new UsageError(`${where}: ${JSON.stringify(pattern)} is not a host/namespace/type pattern`, {
      hint: 'Write it as a lock file names providers, with * for any part or run of characters: registry.terraform.io/hashicorp/* or */*/*.',
    });
  }
  return parts.join('/').toLowerCase();
}

/** Whether a lock file address matches a checked pattern (`*` never crosses a `/`). */
export function matchesPattern(pattern: string, address: string): boolean {
  const source = pattern
    .split('*')
    .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${source}$`).test(address.toLowerCase());
}

/**
 * The policy of a run: the file's (when given) with the flags' patterns and platforms added; the platforms
 * default to linux_amd64 when neither names any.
 */
export function runPolicy(
  file: LockPolicy | undefined,
  flags: { allow: string[]; platforms: string[] },
): LockPolicy {
  const allow = [...(file?.allow ?? []), ...flags.allow.map((p) => checkPattern(p, '--allow'))];
  const named = [...(file?.platforms ?? []), ...flags.platforms];
  return {
    allow: [...new Set(allow)],
    platforms: named.length === 0 ? DEFAULT_RUN_PLATFORMS : [...new Set(named)],
    providers: file?.providers ?? [],
  };
}
