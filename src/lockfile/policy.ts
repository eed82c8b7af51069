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
 * Each `providers:` entry may also hold a cooldown, the signing keys allowed, and approvals (./policyRules.ts;
 * ./admission.ts decides with them). Unknown fields are errors naming their line: a misspelled `allow` must not
 * admit nothing silently, nor a misspelled `versions` check nothing.
 */
import * as path from 'node:path';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { readRegularCapped, SMALL_FILE_CAPS } from '../release/smallFile.js';
import { matches, providerRule, providerRuleSchema } from './policyRules.js';
import type { ProviderRule } from './policyRules.js';
import { readPolicyYaml } from './policyYaml.js';

export type { ApprovalRecord, AutoApproveRule, ProviderRule } from './policyRules.js';

/** The platform runs need an `h1:` for when none is named: HCP Terraform's workers run on linux_amd64. */
export const DEFAULT_RUN_PLATFORMS = ['linux_amd64'];

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
  providers: z.record(z.string(), providerRuleSchema).optional(),
});

/**
 * Parses the policy file's text; UsageError (exit 2) naming the file, the line and the field that is wrong. An empty
 * file is refused (a policy truncated to nothing must not admit everything) unless `empty` allows it (`approve`
 * starting a new file).
 */
export function parsePolicy(text: string, file: string, options: { empty?: 'allowed' } = {}): LockPolicy {
  const fail = (why: string, line?: number): UsageError =>
    new UsageError(`Invalid policy file ${file}: ${line === undefined ? '' : `line ${line}: `}${why}`, {
      hint: 'Write it as docs/supply-chain.md shows: allow (a list of host/namespace/type patterns), platforms (a list of <os>_<arch>) and providers (pattern → versions, min-age, keys, approval, auto-approve, approvals).',
      details: { file, ...(line === undefined ? {} : { line }) },
    });
  const yaml = readPolicyYaml(text, fail);
  const locate = (path: readonly PropertyKey[], key?: string) => {
    const named = key === undefined ? path : [...path, key];
    return {
      name: named.length === 0 ? 'the document' : named.map(String).join('.'),
      line: yaml.lineOf(path, key),
    };
  };
  if ((yaml.data === null || yaml.data === undefined) && options.empty !== 'allowed')
    throw fail(
      'it is empty: give at least one of allow, platforms or providers (a policy of nothing admits everything)',
    );
  const parsed = policySchema.safeParse(yaml.data ?? {});
  if (!parsed.success) {
    // A misspelled field says so first: its value's own complaint would hide the misspelling.
    const { issues } = parsed.error;
    const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
    const { name } = locate(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const line = yaml.lineOf(issue.path, issue.keys[0]);
      throw fail(
        `${name}: unknown field ${issue.keys.join(', ')} (a rule or field this version does not know admits nothing)`,
        line,
      );
    }
    throw fail(`${name}: ${issue.message}`, yaml.lineOf(issue.path));
  }
  const { allow = [], platforms = [], providers = {} } = parsed.data;
  // A pattern that is none names its line, as every other field does.
  const pattern = (text: string, path: readonly PropertyKey[], key?: string): string => {
    try {
      return checkPattern(text, locate(path, key).name);
    } catch (error) {
      throw fail((error as Error).message, yaml.lineOf(path, key));
    }
  };
  return {
    allow: allow.map((p, i) => pattern(p, ['allow', i])),
    platforms,
    providers: Object.entries(providers).map(([text, rule]) =>
      providerRule(pattern(text, ['providers'], text), rule, ['providers', text], locate, fail),
    ),
  };
}

/**
 * Reads and parses the policy file `given` (relative to `cwd`; `file` when its path is known otherwise, `given`
 * then only naming it): a regular file of at most 1 MiB.
 */
export async function readPolicyFile(given: string, cwd: string, file?: string): Promise<LockPolicy> {
  let bytes: Buffer;
  try {
    ({ bytes } = await readRegularCapped(file ?? path.resolve(cwd, given), SMALL_FILE_CAPS.key));
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
  // A blank or a control character inside would make a pattern no address matches: refused, not ignored.
  if (parts.length !== 3 || parts.some((p) => p === '' || /[\s\p{Cc}]/u.test(p))) {
    throw new UsageError(`${where}: ${JSON.stringify(pattern)} is not a host/namespace/type pattern`, {
      hint: 'Write it as a lock file names providers, with * for any part or run of characters: registry.terraform.io/hashicorp/* or */*/*.',
    });
  }
  return parts.join('/').toLowerCase();
}

/** Whether a lock file address matches a checked pattern (`*` never crosses a `/`). */
export function matchesPattern(pattern: string, address: string): boolean {
  return matches(pattern, address);
}

/** The two spellings of one private registry, and the policy read with them as one. */
export interface RegistrySpellings {
  /** `<host>/<namespace>`, as lock files write the registry's providers. */
  canonical: string;
  /** `localterraform.com/<namespace>`, the platform's generic name for itself. */
  alias: string;
  /**
   * The rules as a run against this registry reads them: a pattern or a record written with the alias stands for
   * the canonical address, so that the addresses a door decides for are always canonical and no spelling escapes a
   * rule.
   */
  rules: (rules: readonly ProviderRule[]) => ProviderRule[];
  /** An address read as the rules are: the alias's spelling made canonical (lower case). */
  address: (address: string) => string;
}

/** The spellings of the registry whose providers a lock file writes as `<canonical>/<type>` (`<host>/<namespace>`). */
export function registrySpellings(canonical: string): RegistrySpellings {
  const alias = `localterraform.com/${canonical.split('/')[1] ?? ''}`.toLowerCase();
  const read = (text: string): string => {
    const lower = text.toLowerCase();
    return lower.startsWith(`${alias}/`) ? canonical + lower.slice(alias.length) : text;
  };
  return {
    canonical,
    alias,
    rules: (rules) =>
      rules.map((rule) => ({
        ...rule,
        pattern: read(rule.pattern),
        approvals: rule.approvals.map((r) => ({
          ...r,
          provider: r.provider === undefined ? undefined : read(r.provider),
        })),
      })),
    address: (address) => read(address.toLowerCase()),
  };
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
