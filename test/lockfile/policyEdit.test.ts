/**
 * An approval record added to a policy file (src/lockfile/policyEdit.ts): under the right entry, comments and order
 * kept, block style where it goes, values a YAML reader would take for numbers quoted; the same record twice is
 * once; a record of the version for other bytes is refused (exit 3), nothing returned to write.
 */
import { describe, expect, it } from 'vitest';
import { VerificationError } from '../../src/errors.js';
import { parsePolicy } from '../../src/lockfile/policy.js';
import { addApproval, type NewApproval } from '../../src/lockfile/policyEdit.js';

const RECORD: NewApproval = {
  provider: 'app.terraform.io/acme/example',
  version: '1.10.0',
  // All digits: a YAML reader would take it for a number if it were not quoted.
  sha256sums: '1'.repeat(64),
  key: '1234567890123456',
  by: 'alice',
  at: '2026-11-28T10:00:00Z',
  reason: 'reviewed: the changelog # and the diff',
};

/** The text written, which must read back as a valid policy holding the record. */
function added(text: string, record: NewApproval = RECORD): string {
  const edit = addApproval(text, 'policy.yaml', record);
  if (edit.outcome !== 'added') throw new Error('not added');
  return edit.text;
}

describe('adding an approval', () => {
  it('to an empty or missing file: a new exact entry, every value kept as text', () => {
    const text = added('');
    const [rule] = parsePolicy(text, 'policy.yaml').providers;
    expect(rule).toMatchObject({ pattern: RECORD.provider, approval: 'none' });
    expect(rule!.approvals).toEqual([
      expect.objectContaining({ ...RECORD, provider: RECORD.provider, line: expect.any(Number) as number }),
    ]);
  });

  it('under the pattern that requires approval, naming its provider; comments, order and flow elsewhere kept', () => {
    const text = [
      '# the policy',
      'allow: [registry.terraform.io/hashicorp/*]   # public ones',
      'providers: { "App.Terraform.io/acme/*": { approval: required }, "x/y/z": { min-age: 7d } }',
      '',
    ].join('\n');
    const written = added(text);
    expect(
      written.startsWith('# the policy\nallow: [registry.terraform.io/hashicorp/*] # public ones\n'),
    ).toBe(true);
    const policy = parsePolicy(written, 'policy.yaml');
    expect(policy.providers.map((p) => p.pattern)).toEqual(['app.terraform.io/acme/*', 'x/y/z']);
    expect(policy.providers[0]!.approvals).toEqual([expect.objectContaining({ provider: RECORD.provider })]);
    expect(written).toContain('App.Terraform.io/acme/*');
    expect(written).toContain('      - provider: app.terraform.io/acme/example\n');
  });

  it('the same record twice is once; other bytes for the version are refused, naming the line', () => {
    const once = added('providers:\n  "app.terraform.io/acme/example":\n    approvals: []\n');
    expect(addApproval(once, 'policy.yaml', { ...RECORD, by: 'bob', reason: 'again' })).toEqual({
      outcome: 'present',
      entry: 'app.terraform.io/acme/example',
      line: 4,
    });
    let error: unknown;
    try {
      addApproval(once, 'policy.yaml', { ...RECORD, sha256sums: 'f'.repeat(64) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toMatch(
      /^policy\.yaml:4 approves app\.terraform\.io\/acme\/example 1\.10\.0 for other bytes/,
    );
  });

  it('a record under another spelling of the provider counts as its own (`same`)', () => {
    const alias = added('', { ...RECORD, provider: 'localterraform.com/acme/example' });
    const same = (address: string): boolean =>
      address.replace(/^localterraform\.com\//, 'app.terraform.io/') === RECORD.provider;
    expect(addApproval(alias, 'policy.yaml', RECORD, same).outcome).toBe('present');
    expect(() => addApproval(alias, 'policy.yaml', { ...RECORD, sha256sums: 'f'.repeat(64) }, same)).toThrow(
      VerificationError,
    );
    // Without it, the other spelling is another provider.
    expect(addApproval(alias, 'policy.yaml', RECORD).outcome).toBe('added');
  });

  it('refuses to edit a policy file that is not valid: exit 2 naming the line', () => {
    expect(() => addApproval('providers:\n  "a/b/c": { cooldown: 7d }\n', 'policy.yaml', RECORD)).toThrow(
      'Invalid policy file policy.yaml: line 2: ',
    );
  });
});
