/**
 * Writing a provider's block of `.terraform.lock.hcl` exactly as Terraform writes it (hashicorp/terraform:
 * internal/depsfile/locks_file.go, `SaveLocksToBytes` and `encodeHashSetTokens`): the two header comment lines
 * and a blank line for a new file; per provider `provider "<address>" {`, `version`, `constraints` when there
 * are any (the single-line attributes aligned on `=` as hclwrite aligns them), then `hashes = [` with one quoted
 * hash per line, each followed by a comma, `]` and `}`. Samples of that output: pypi/infra:
 * terraform/.terraform.lock.hcl, mrzzy/nimbus: terraform/.terraform.lock.hcl.
 */

/** One provider's entry in a lock file. */
export interface ProviderLock {
  /** `<hostname>/<namespace>/<type>`, lower case. */
  address: string;
  version: string;
  /** Canonical constraints (see constraints.ts), or undefined for none. */
  constraints?: string | undefined;
  /** Sorted and de-duplicated (`sortHashes`). */
  hashes: string[];
}

/** The first lines of a lock file Terraform creates, blank line included. */
export const LOCK_FILE_HEADER =
  '# This file is maintained automatically by "terraform init".\n' +
  '# Manual edits may be lost in future updates.\n' +
  '\n';

/** A string literal as hclwrite writes a cty string (`TokensForValue`): quoted, escaped, templates doubled. */
export function hclString(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const next = value[i + 1];
    if (c === '\\') out += '\\\\';
    else if (c === '"') out += '\\"';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if ((c === '$' || c === '%') && next === '{') out += c + c;
    else if (c < ' ' || c === '\x7f') out += `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `"${out}"`;
}

/** The block of one provider, from `provider` to its closing `}` (no newline after it), lines ending in `eol`. */
export function renderProviderBlock(lock: ProviderLock, eol = '\n'): string {
  const lines = [`provider ${hclString(lock.address)} {`];
  if (lock.constraints === undefined) {
    lines.push(`  version = ${hclString(lock.version)}`);
  } else {
    lines.push(`  version     = ${hclString(lock.version)}`);
    lines.push(`  constraints = ${hclString(lock.constraints)}`);
  }
  if (lock.hashes.length > 0) {
    lines.push('  hashes = [');
    for (const hash of lock.hashes) lines.push(`    ${hclString(hash)},`);
    lines.push('  ]');
  }
  lines.push('}');
  return lines.join(eol);
}

/** A whole new lock file holding one provider, as `terraform init` would create it. */
export function renderLockFile(lock: ProviderLock): string {
  return `${LOCK_FILE_HEADER}${renderProviderBlock(lock)}\n`;
}
