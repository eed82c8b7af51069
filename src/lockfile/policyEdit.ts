/**
 * Adding an approval record to a policy file (`provider approve`), keeping the file's comments and order: the
 * record goes under the entry that names the provider exactly, else under the first entry whose pattern matches it
 * and requires approval (with its `provider`), else under the first that matches, else under a new exact entry.
 * A record for the same bytes already there changes nothing; a record of the version for other bytes or another key
 * is refused (the bytes served changed since it was given, or the record is wrong): exit 3, nothing written. The
 * file is parsed (./policy.ts) before and after, so only a valid policy is ever written.
 */
import { isMap, isSeq, parseDocument, Scalar, type Document, type YAMLMap } from 'yaml';
import { VerificationError } from '../errors.js';
import { matchesPattern, parsePolicy, type ApprovalRecord, type LockPolicy } from './policy.js';

/** The record to add: one as the file holds it, its provider named (the `line` is the file's business). */
export type NewApproval = Omit<ApprovalRecord, 'provider' | 'line'> & { provider: string };

/** What adding made of the file. */
export type ApprovalEdit =
  /** `policy`: the text written, as read back (only a valid policy is written). */
  | { outcome: 'added'; text: string; entry: string; policy: LockPolicy }
  | { outcome: 'present'; entry: string; line: number };

/**
 * Adds `record` to the policy file's text (see above); `file` names it in errors. `same` says which addresses stand
 * for the record's provider (its other spellings): their records of the version count as its own.
 */
export function addApproval(
  text: string,
  file: string,
  record: NewApproval,
  same: (address: string) => boolean = (address) => address === record.provider,
): ApprovalEdit {
  const policy = parsePolicy(text, file, { empty: 'allowed' });
  const present = existing(policy, record, file, same);
  if (present !== undefined) return { outcome: 'present', ...present };
  const document = parseDocument(text);
  const entry = chooseEntry(policy, record.provider);
  const providers = document.get('providers', true);
  if (!isMap(providers)) document.set('providers', document.createNode({}));
  // Block style where the record goes (a flow map or list, `providers: {}`, would print it on one line).
  else providers.flow = false;
  if (entry === undefined) {
    document.setIn(['providers', record.provider], document.createNode({}));
  }
  // The entry's key as the file spells it (patterns are compared in lower case).
  const key = entry === undefined ? record.provider : spelled(document, entry);
  const node = document.getIn(['providers', key], true);
  if (isMap(node)) node.flow = false;
  const fields = recordNode(document, record, key.includes('*'));
  if (document.getIn(['providers', key, 'approvals']) === undefined)
    document.setIn(['providers', key, 'approvals'], document.createNode([]));
  const approvals = document.getIn(['providers', key, 'approvals'], true);
  if (isSeq(approvals)) approvals.flow = false;
  document.addIn(['providers', key, 'approvals'], fields);
  const written = document.toString({ lineWidth: 0, flowCollectionPadding: false });
  return { outcome: 'added', text: written, entry: key, policy: parsePolicy(written, file) };
}

/** The record of the same version already in the file: the same bytes (its place), or an error (other bytes). */
function existing(
  policy: LockPolicy,
  record: NewApproval,
  file: string,
  same: (address: string) => boolean,
): { entry: string; line: number } | undefined {
  for (const rule of policy.providers) {
    for (const r of rule.approvals) {
      if (!same(r.provider ?? rule.pattern) || r.version !== record.version) continue;
      if (r.sha256sums === record.sha256sums && r.key === record.key)
        return { entry: rule.pattern, line: r.line };
      throw new VerificationError(
        `${file}:${r.line} approves ${record.provider} ${record.version} for other bytes than the registry serves now: SHA256SUMS ${r.sha256sums} signed by ${r.key} there, ${record.sha256sums} signed by ${record.key} served`,
        {
          hint: 'The version was changed after it was approved, or the record is wrong: find out which before anything uses it. Nothing was written; remove the record by hand (a reviewed change) to approve the bytes served now.',
          details: { file, line: r.line, provider: record.provider, version: record.version },
        },
      );
    }
  }
  return undefined;
}

/** The `providers:` key the record goes under, or undefined for a new exact entry. */
function chooseEntry(policy: LockPolicy, provider: string): string | undefined {
  const matching = policy.providers.filter((rule) => matchesPattern(rule.pattern, provider));
  const exact = matching.find((rule) => rule.pattern === provider);
  const required = matching.find((rule) => rule.approval === 'required');
  return (exact ?? required ?? matching[0])?.pattern;
}

/** The key of `providers:` whose pattern is `pattern`, as the file spells it. */
function spelled(document: Document, pattern: string): string {
  const providers = document.get('providers', true);
  if (isMap(providers))
    for (const pair of providers.items) {
      const name = String(pair.key instanceof Scalar ? pair.key.value : pair.key);
      if (name.trim().toLowerCase() === pattern) return name;
    }
  return pattern;
}

/** The record as YAML: the values a reader could take for numbers or dates quoted. */
function recordNode(document: Document, record: NewApproval, named: boolean): YAMLMap {
  const { provider, ...rest } = record;
  const node = document.createNode(named ? { provider, ...rest } : rest) as YAMLMap;
  for (const pair of node.items) {
    const name = (pair.key as Scalar).value;
    if (['version', 'sha256sums', 'key', 'at'].includes(String(name)) && pair.value instanceof Scalar)
      pair.value.type = Scalar.QUOTE_DOUBLE;
  }
  return node;
}
