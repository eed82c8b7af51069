/**
 * `provider approve <namespace>/<type> <version> --policy <file> --reason <text>`: verifies a version the private
 * registry serves as `provider check --download` does (the signature over SHA256SUMS with the registered key,
 * every zip downloaded and held against the signed SHA256SUMS, served `packages`), then adds its approval record to
 * the policy file, bound to what was verified (the SHA-256 of its SHA256SUMS, the key that signed it), keeping the
 * file's comments and order (src/lockfile/policyEdit.ts), atomically. The record then admits the version wherever
 * the policy applies (`approval: required`, and it lifts a cooldown). A second approval of the same bytes changes
 * nothing; one whose file already approves other bytes for the version is refused (exit 3). Every flag and the
 * policy file are checked before any request.
 */
import * as fs from 'node:fs/promises';
import { writeFileAtomically } from '../atomicWrite.js';
import { checkConsumerView } from '../consumer/check.js';
import { UsageError, VerificationError } from '../errors.js';
import { decide, keyIdsOf } from '../lockfile/admission.js';
import { lockAddress, lockHost, registryPrefix } from '../lockfile/address.js';
import { lineDiff } from '../lockfile/diff.js';
import { parsePolicy, registrySpellings, type LockPolicy } from '../lockfile/policy.js';
import { addApproval, type NewApproval } from '../lockfile/policyEdit.js';
import { readRegularCapped, SMALL_FILE_CAPS } from '../release/smallFile.js';
import { successMark } from '../ui/glyphs.js';
import { createProgress } from '../ui/progress.js';
import type { Settings } from '../config/resolve.js';
import type { Progress } from '../ui/progress.js';
import type { VerifiedForApproval } from './approveFrom.js';
import type { RunContext } from './context.js';
import { parseVersionArgument } from './manage/context.js';
import { policyFileOf } from './policyFile.js';
import type { Session } from './session.js';

/** The flags of `provider approve`. */
export interface ApproveFlags {
  policy?: string;
  reason?: string;
  /** Who approves (default: the CI's user, else the system's). */
  by?: string;
  dryRun?: boolean;
  /** The origin to verify the version at, before it is mirrored (`registry.terraform.io`). */
  from?: string;
  /** With `--from`: the platforms to verify (default: every one the origin lists). */
  platforms?: string;
}

/** What `provider approve` is asked to do. */
export interface ApproveOptions extends ApproveFlags {
  provider: string;
  version: string;
}

/** The `--json` document. */
export interface ApproveDocument {
  ok: true;
  dryRun: boolean;
  /** `added`: the record was written (would be, with --dry-run); `present`: the file already held it. */
  outcome: 'added' | 'present';
  policy: string;
  /** The `providers:` entry the record is under. */
  entry: string;
  record: NewApproval;
  /** The other addresses the same record was written for (`--from`: the origin's). */
  also: string[];
}

const NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** Runs `provider approve`; 0 when the record is written or already there. */
export async function runApprove(
  context: RunContext,
  session: Session,
  options: ApproveOptions,
): Promise<number> {
  const { namespace, type } = providerArgument(options.provider);
  const version = parseVersionArgument(options.version);
  const reason = oneLine(
    options.reason,
    '--reason',
    'why it is approved: "reviewed the changelog of 5.80.0"',
  );
  const by = oneLine(approver(context, options.by), '--by', 'who approves');
  if (options.platforms !== undefined && options.from === undefined)
    throw new UsageError('--platforms goes with --from: it names the platforms verified at the origin', {
      hint: 'Without --from, every platform the private registry serves is verified; leave --platforms out.',
    });
  // Every flag first; the configuration file (no request) may name the policy.
  const settings = await session.settings();
  const named = policyFileOf(options.policy, settings, context.cwd);
  if (named === undefined)
    throw new UsageError('provider approve needs --policy <file>: the approval is written there', {
      hint: 'Give the policy file the other commands read (docs/supply-chain.md), or set "policy" in .providerrc.json; it is created when missing.',
    });
  const { shown } = named;
  // Written where it is: a policy file behind a link stays behind it.
  const given = named.file;
  const file = await fs.realpath(given).catch(() => given);
  const read = await readPolicyText(file, shown);
  parsePolicy(read.text, shown, { empty: 'allowed' });

  const progress = await createProgress(context.output, {
    stream: context.stderr,
    now: () => context.now().getTime(),
  });
  let verified: Verified;
  try {
    verified =
      options.from === undefined
        ? await verifyInRegistry(context, session, { namespace, type, version }, progress)
        : await verifyFromOrigin(
            context,
            settings,
            { from: options.from, platforms: options.platforms },
            { namespace, type, version },
            progress,
          );
  } finally {
    progress.stop();
  }
  const record: NewApproval = {
    provider: verified.provider,
    version,
    sha256sums: verified.sha256sums,
    key: verified.signature.keyId.toUpperCase(),
    by,
    at: context
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z'),
    reason,
  };
  // The file as it is now: an edit made while the version was verified is kept, never written over.
  const current = await readPolicyText(file, shown);
  const records = [record, ...verified.also.map((provider) => ({ ...record, provider }))];
  const edit = addRecords(current.text, shown, records, verified.same);
  if (edit.policy !== undefined) refuseUseless(edit.policy, shown, record, verified, context.now());
  const dryRun = options.dryRun === true;
  if (edit.outcome === 'added' && !dryRun) writeFileAtomically(file, edit.text, { mode: current.mode });
  const document: ApproveDocument = {
    ...{ ok: true, dryRun, outcome: edit.outcome, policy: shown, entry: edit.entry, record },
    also: verified.also,
  };
  if (context.output.json) context.output.resultJson(document);
  else render(context, document, edit.outcome === 'added' ? lineDiff(current.text, edit.text) : []);
  return 0;
}

/**
 * A version verified: the address its record is written for, the other addresses it is recorded for too, which
 * spellings stand for one address (`localterraform.com/<org>` and the host), and what it proved.
 */
interface Verified extends VerifiedForApproval {
  provider: string;
  also: string[];
  same: (record: string) => (address: string) => boolean;
}

/**
 * The records added to the text one after the other (each present already, or added); `added` when any was, with
 * the text and policy after the last, and the entry of the first one added (else the first's, where it is).
 */
function addRecords(
  text: string,
  shown: string,
  records: NewApproval[],
  same: Verified['same'],
): { outcome: 'added' | 'present'; text: string; entry: string; policy?: LockPolicy } {
  let result: ReturnType<typeof addRecords> = { outcome: 'present', text, entry: '' };
  for (const [index, record] of records.entries()) {
    const edit = addApproval(result.text, shown, record, same(record.provider));
    // The entry named is the first record's, or, when it was there already, the first one added's.
    const first = result.outcome === 'present';
    if (edit.outcome === 'added')
      result = {
        outcome: 'added',
        text: edit.text,
        entry: first ? edit.entry : result.entry,
        policy: edit.policy,
      };
    else if (index === 0) result = { ...result, entry: edit.entry };
  }
  return result;
}

/** Which spellings stand for one address of the organization's registry: its host's, and `localterraform.com`. */
function sameInRegistry(settings: Settings, namespace: string): Verified['same'] {
  const { address: read } = registrySpellings(registryPrefix(settings.apiHost, namespace));
  return (record) => (address) => read(address) === read(record);
}

/** Verified as the private registry serves it, as `provider check --download` does. */
async function verifyInRegistry(
  context: RunContext,
  session: Session,
  { namespace, type, version }: { namespace: string; type: string; version: string },
  progress: Progress,
): Promise<Verified> {
  const settings = await session.settings();
  // The private registry's namespace is its organization's name: `my-org/example` needs no --organization.
  const client = await session.client();
  const address = { organization: settings.organization ?? namespace, namespace, name: type };
  context.output.info(
    `Verifying ${namespace}/${type} ${version} as terraform init would, every zip downloaded`,
  );
  const report = await checkConsumerView({
    ...{ client, address, version, output: context.output, signal: context.signal },
    ...{ now: context.now, download: true, lockHashes: true, tmpDir: context.tmpDir, progress },
  });
  const provider = lockAddress(settings.apiHost, namespace, type);
  const { sha256 } = report.shasums;
  const same = sameInRegistry(settings, namespace);
  return { provider, also: [], same, sha256sums: sha256, signature: report.signature };
}

/**
 * Verified at its origin before it is mirrored (./approveFrom.ts). The record is for its origin's address, which
 * every mirror of it decides for; and, when the configuration names an organization, for the address it will have
 * in the organization's registry (`<host>/<organization>/<type>`) too, which `lock upgrade` and `lock check` decide
 * for once it is mirrored. Both bind the same bytes: the mirror copies them as they are.
 */
async function verifyFromOrigin(
  context: RunContext,
  settings: Settings,
  { from, platforms }: { from: string; platforms?: string | undefined },
  { namespace, type, version }: { namespace: string; type: string; version: string },
  progress: Progress,
): Promise<Verified> {
  context.output.info(
    `Verifying ${namespace}/${type} ${version} at ${from} as provider mirror would, every zip downloaded`,
  );
  const { verifyAtOrigin } = await import('./approveFrom.js');
  const at = await verifyAtOrigin(context, from, { namespace, type }, version, progress, platforms);
  const origin = `${lockHost(at.host)}/${namespace}/${type}`.toLowerCase();
  const organization = settings.namespace ?? settings.organization;
  if (organization === undefined) return { ...at, provider: origin, also: [], same: exactly };
  const provider = lockAddress(settings.apiHost, organization, type);
  const spellings = sameInRegistry(settings, organization);
  const same = (record: string) => (record === origin ? exactly(record) : spellings(record));
  return { ...at, provider, also: [origin], same };
}

/** An address that has one spelling. */
function exactly(record: string): (address: string) => boolean {
  return (address) => address === record;
}

/** The result, for people: what was approved, where, and with --dry-run the diff. */
function render(context: RunContext, doc: ApproveDocument, diff: string[]): void {
  const { output } = context;
  const { record } = doc;
  const what = `${record.provider} ${record.version} (SHA256SUMS ${record.sha256sums.slice(0, 16)}…, signed by ${record.key})`;
  if (doc.outcome === 'present') {
    output.result(`${successMark(output.color)} ${doc.policy} already approves ${what}: nothing changed`);
    return;
  }
  if (doc.dryRun) {
    output.result(`--- ${doc.policy}`);
    for (const line of diff) output.result(line);
    output.result(`Dry run: ${doc.policy} would approve ${what}; nothing was written`);
    return;
  }
  const also = doc.also.length === 0 ? '' : `; recorded for ${doc.also.join(', ')} too`;
  output.result(
    `${successMark(output.color)} Approved ${what} in ${doc.policy} (under "${doc.entry}")${also}`,
  );
}

/**
 * Refuses a record the policy would refuse its version with all the same (its `versions`, its pinned keys): written,
 * it would read as an approval and admit nothing. Exit 3, nothing written.
 */
function refuseUseless(
  policy: LockPolicy,
  shown: string,
  record: NewApproval,
  verified: Verified,
  now: Date,
): void {
  const { signature } = verified;
  const facts = {
    address: record.provider,
    also: verified.also,
    version: record.version,
    published: undefined,
    keyIds: keyIdsOf(signature),
    sha256sums: record.sha256sums,
  };
  // Both spellings of the record's registry are one, as the doors read them.
  const rules = registrySpellings(record.provider.split('/').slice(0, 2).join('/')).rules(policy.providers);
  const decision = decide(rules, facts, now);
  if (decision.outcome !== 'refused') return;
  throw new VerificationError(
    `${record.provider} ${record.version} is refused by ${shown} even approved (${decision.rule}): ${decision.reason}`,
    {
      hint: 'An approval does not override versions or pinned keys. Nothing was written; change the policy in a reviewed change if the version should enter.',
      details: { rule: decision.rule },
    },
  );
}

/** `<namespace>/<type>`, checked. */
function providerArgument(text: string): { namespace: string; type: string } {
  const parts = text.trim().toLowerCase().split('/');
  if (parts.length !== 2 || !parts.every((p) => NAME.test(p))) {
    throw new UsageError(`"${text}" is not <namespace>/<type>`, {
      hint: 'Name the provider as required_providers does without its host: my-org/example, hashicorp/aws.',
    });
  }
  return { namespace: parts[0]!, type: parts[1]! };
}

/** A one-line, non-empty text flag. */
function oneLine(value: string | undefined, flag: string, what: string): string {
  const text = value?.trim() ?? '';
  if (text === '' || /[\p{Cc}]/u.test(text)) {
    throw new UsageError(`${flag} needs one line of text: ${what}`, {
      hint: `Give ${flag} "<text>"; it is kept in the policy file, where reviewers read it.`,
    });
  }
  return text;
}

/** Who approves: --by, else the CI's user (GitHub Actions, GitLab), else the system's. */
function approver(context: RunContext, by: string | undefined): string {
  return by ?? context.env.GITHUB_ACTOR ?? context.env.GITLAB_USER_LOGIN ?? context.user;
}

/** The policy file's text and mode; an empty policy when it does not exist yet. */
async function readPolicyText(file: string, shown: string): Promise<{ text: string; mode: number }> {
  try {
    const { bytes, mode } = await readRegularCapped(file, SMALL_FILE_CAPS.key);
    return { text: bytes.toString('utf8'), mode };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { text: '', mode: 0o644 };
    throw new UsageError(`The policy file ${shown} cannot be read (${code ?? (error as Error).message})`, {
      hint: 'Give --policy the path of a YAML policy file (docs/supply-chain.md shows one).',
      details: { file: shown },
      cause: error,
    });
  }
}
