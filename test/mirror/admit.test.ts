/**
 * The addresses a mirrored version is decided for (src/mirror/admit.ts): its origin's, written as lock files and the
 * policy's patterns write hosts (an internationalised host in Unicode, its port kept), and the one it gets in the
 * private registry.
 */
import { describe, expect, it } from 'vitest';
import { parseHostname } from '../../src/config/index.js';
import { decide } from '../../src/lockfile/admission.js';
import { parsePolicy } from '../../src/lockfile/policy.js';
import { policyAddresses } from '../../src/mirror/admit.js';

const PROVIDER = { namespace: 'acme', type: 'example' };

describe('the addresses a mirrored version is decided for', () => {
  it('an internationalised origin host in Unicode, as a pattern names it; the port kept', () => {
    const host = parseHostname('bücher.example:8443', '--from').host;
    expect(host).toBe('xn--bcher-kva.example:8443');
    expect(policyAddresses(host, PROVIDER, undefined)).toEqual({
      address: 'bücher.example:8443/acme/example',
    });
    const rules = parsePolicy(
      'providers:\n  "bücher.example:8443/acme/*": { keys: [B7F05A4C6E0A8E0C] }\n',
      'p.yaml',
    );
    const facts = { ...policyAddresses(host, PROVIDER, undefined), version: '1.0.0', published: undefined };
    expect(decide(rules.providers, { ...facts, keyIds: ['34365D9472D7468F'] }, new Date())).toMatchObject({
      outcome: 'refused',
      rule: 'key-not-allowed',
    });
  });

  it('into a registry: its address there first, its origin also', () => {
    expect(policyAddresses('registry.terraform.io', PROVIDER, 'app.terraform.io/my-org/example')).toEqual({
      address: 'app.terraform.io/my-org/example',
      also: ['registry.terraform.io/acme/example'],
    });
  });
});
