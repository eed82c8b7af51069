/**
 * `provider lock check [dir]` below the command line: holds `dir/.terraform.lock.hcl` against what the private
 * registry (`--hostname`'s host, or `localterraform.com`, and the organization's namespace) serves and against the
 * run's policy (src/lockfile/policy.ts: for a version the registry serves, what src/lockfile/admission.ts decides
 * about it too), and reports every finding (src/lockfile/audit.ts) as text, `--json`, or `--format sarif|junit`
 * on stdout or in `--output <file>`. Exit 0 when nothing is wrong, 3 when something is (a version the policy
 * holds too); the registry is only read (GETs), and only for the providers it serves.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UsageError } from '../../errors.js';
import { registryPrefix } from '../../lockfile/address.js';
import { auditOther, auditServed, missingLockFile, type LockFinding } from '../../lockfile/audit.js';
import { readProviderBlock } from '../../lockfile/parse.js';
import { escapeChar, visible } from '../../ui/output.js';
import {
  matchesPattern,
  readPolicyFile,
  runPolicy,
  registrySpellings,
  type LockPolicy,
  type ProviderRule,
} from '../../lockfile/policy.js';
import { policyFileOf } from '../policyFile.js';
import type { RunContext } from '../context.js';
import { parsePlatforms, readLockFile } from '../lock.js';
import type { Session } from '../session.js';
import { lockCheckJunit } from './junit.js';
import { renderLockCheck, type CheckedProvider, type LockCheckDocument } from './report.js';
import { lockCheckSarif } from './sarif.js';
import { servedReader } from './served.js';

/** The flags of `provider lock check`. */
export interface LockCheckFlags {
  platform?: string[];
  allow?: string[];
  policy?: string;
  format?: string;
  output?: string;
  json?: boolean;
}

/** What `provider lock check` is asked to do: the flags, the configuration's root and the program's version. */
export interface LockCheckOptions extends LockCheckFlags {
  dir: string;
  /** The program's version, which the SARIF log names its tool by. */
  toolVersion: string;
}

const FORMATS = ['sarif', 'junit'] as const;

/** The lock file's name in a configuration's root. */
const LOCK_FILE_NAME = '.terraform.lock.hcl';

/** Runs `provider lock check [dir]`; returns 0 (nothing wrong) or 3 (findings), or throws. */
export async function runLockCheck(
  context: RunContext,
  session: Session,
  options: LockCheckOptions,
): Promise<number> {
  const format = checkFormat(options);
  const platforms = parsePlatforms(options.platform) ?? [];
  const settings = await session.settings();
  const named = policyFileOf(options.policy, settings, context.cwd);
  const file = named === undefined ? undefined : await readPolicyFile(named.shown, context.cwd, named.file);
  const flagged = runPolicy(file, { allow: options.allow ?? [], platforms });
  const namespace = settings.namespace ?? settings.organization;
  if (namespace === undefined) {
    throw new UsageError('No organization given: the lock file is held against its private registry', {
      hint: 'Pass --organization <name> (and --namespace if it differs), set TFE_ORGANIZATION, or put "organization" in .providerrc.json.',
    });
  }
  const spellings = registrySpellings(registryPrefix(settings.apiHost, namespace));
  const registry = spellings.canonical;
  const privatePrefixes = [registry, spellings.alias];
  // Both spellings of the private registry are one: no spelling escapes a rule.
  const policy = { ...flagged, providers: spellings.rules(flagged.providers) };
  const now = context.now();
  const shown = path.join(options.dir, LOCK_FILE_NAME);
  const existing = await readLockFile(path.resolve(context.cwd, shown), shown);

  const findings: LockFinding[] = [];
  const providers: CheckedProvider[] = [];
  if (existing === undefined) findings.push(missingLockFile(shown));
  const read = servedReader(context, () => session.registry(), { dated: dated(policy.providers) });
  const policyShown = named?.shown ?? '<file>';
  for (const block of existing?.parsed.providers ?? []) {
    const locked = readProviderBlock(block, shown);
    const address = block.label.toLowerCase();
    const entry = { address, version: locked.version, hashes: locked.hashes, line: locked.line };
    const type = address.split('/').pop() ?? address;
    if (privatePrefixes.some((prefix) => address === `${prefix}/${type}`)) {
      providers.push({ ...entry, origin: 'private' });
      const rewrite = `provider lock --registry --version ${locked.version} --name ${type} --lock-file ${shown}`;
      findings.push(
        ...auditServed(entry, await read(type, locked.version), policy, {
          ...{ lockFile: shown, rewrite, now },
          approve: `provider approve ${namespace.toLowerCase()}/${type} ${locked.version} --policy ${policyShown}`,
          address: spellings.address(address),
        }),
      );
    } else {
      providers.push({ ...entry, origin: allowed(policy, address) ? 'allowed' : 'other' });
      const [host = '', origin = ''] = address.split('/');
      const approve = `provider approve ${origin}/${type} ${locked.version} --from ${host} --policy ${policyShown}`;
      findings.push(...auditOther(entry, policy, registry, { now, approve }));
    }
  }

  const document: LockCheckDocument = {
    ok: findings.length === 0,
    lockFile: shown,
    registry,
    platforms: policy.platforms,
    providers: providers.map(({ address, version, origin, line }) => ({ address, version, origin, line })),
    // The words of each finding as every format prints them; its provider and subject stay exact.
    findings: findings.map((f) => ({ ...f, message: visible(f.message), hint: visible(f.hint) })),
  };
  await report(context, document, format, options);
  return document.ok ? 0 : 3;
}

/** Whether a rule of the policy counts a version's age: then each version's `created-at` is read. */
function dated(rules: readonly ProviderRule[]): boolean {
  return rules.some((r) => r.minAgeMs !== undefined || r.autoApprove.some((a) => a.minAgeMs !== undefined));
}

function allowed(policy: LockPolicy, address: string): boolean {
  return policy.allow.some((pattern) => matchesPattern(pattern, address));
}

/** `--format` checked with `--json` and `--output`: the report's format, or undefined for text (or `--json`). */
function checkFormat(options: LockCheckOptions): (typeof FORMATS)[number] | undefined {
  const { format } = options;
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format ${JSON.stringify(format)} is not a report format`, {
      hint: 'Choose sarif (code scanning, run task outcomes) or junit (test reports); text is the default, --json the document.',
    });
  }
  if (format !== undefined && options.json === true) {
    throw new UsageError('Give either --json or --format, not both', {
      hint: '--json prints the check as one JSON document; --format sarif|junit prints a report for CI.',
    });
  }
  if (options.output !== undefined && format === undefined) {
    throw new UsageError('--output writes the --format report to a file, and no --format was given', {
      hint: 'Add --format sarif or --format junit.',
    });
  }
  return format as (typeof FORMATS)[number] | undefined;
}

/**
 * Prints or writes the outcome: `--json` one document; `--format` its report on stdout, or in `--output` with
 * the text on stdout; else the text.
 */
async function report(
  context: RunContext,
  document: LockCheckDocument,
  format: (typeof FORMATS)[number] | undefined,
  options: LockCheckOptions,
): Promise<void> {
  const { output } = context;
  const file = options.output;
  if (output.json) return output.resultJson(document);
  if (format === undefined) return renderLockCheck(output, document);
  const sarif = format === 'sarif' ? lockCheckSarif(document, options.toolVersion) : undefined;
  if (file === undefined) {
    if (sarif !== undefined) output.resultJson(sarif);
    else for (const line of lockCheckJunit(document)) output.result(line);
    return;
  }
  // DEL and C1 controls escaped in the JSON's strings, as on stdout (src/ui/output.ts).
  const text =
    sarif === undefined
      ? lockCheckJunit(document).join('\n')
      : JSON.stringify(sarif, null, 2).replace(/[\u007f-\u009f]/g, escapeChar);
  try {
    await fs.writeFile(path.resolve(context.cwd, file), output.redact(`${text}\n`));
  } catch (error) {
    throw new UsageError(`${file} cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`, {
      hint: 'Give --output a path in a folder that exists and is writable.',
      details: { file },
      cause: error,
    });
  }
  output.info(`Wrote the ${format === 'sarif' ? 'SARIF' : 'JUnit'} report to ${file}`);
  renderLockCheck(output, document);
}
