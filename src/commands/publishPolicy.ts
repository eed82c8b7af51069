/**
 * The policy at publish's door: a provider of your own is held to the policy's `versions` and pinned `keys` (and an
 * approval recorded for the version binds its bytes), checked once the signature is verified and before anything
 * is written. What a cooldown or `approval: required` holds is for the doors where versions are taken in and
 * used (`mirror`, `lock upgrade`, `lock check`): a version of your own has no publication date before it is
 * published, and is approved once the registry serves it.
 */
import type { Settings } from '../config/index.js';
import { VerificationError } from '../errors.js';
import { decide, provenBy, signedFacts } from '../lockfile/admission.js';
import { registryPrefix } from '../lockfile/address.js';
import { readPolicyFile, registrySpellings, type ProviderRule } from '../lockfile/policy.js';
import type { SignerInfo } from '../release/types.js';
import type { RunContext } from './context.js';
import { policyFileOf } from './policyFile.js';

/** The policy of a publish run. */
export interface PublishPolicy {
  file: string;
  rules: ProviderRule[];
  /** The address of the provider `name` in the organization's registry. */
  address: (name: string) => string;
  /** Refuses (exit 3) a release the policy refuses: `admitOwn` with this policy. */
  admit: (release: OwnRelease, signer: SignerInfo, now: Date) => void;
}

/** What the policy decides on: the release's name and version, and its SHA256SUMS bytes. */
export interface OwnRelease {
  name: string;
  version: string;
  shasums: Uint8Array;
}

/** The policy file of the run (`--policy`, else the configuration's), read before any request; undefined: none. */
export async function publishPolicy(
  context: RunContext,
  settings: Settings,
  flag: string | false | undefined,
): Promise<PublishPolicy | undefined> {
  if (flag === false) return undefined;
  const named = policyFileOf(flag, settings, context.cwd);
  if (named === undefined) return undefined;
  const policy = await readPolicyFile(named.shown, context.cwd, named.file);
  // The namespace published to: the organization's, unless one is named.
  const organization = settings.namespace ?? settings.organization ?? '';
  const spellings = registrySpellings(registryPrefix(settings.apiHost, organization));
  const own: PublishPolicy = {
    file: named.shown,
    rules: spellings.rules(policy.providers),
    address: (name) => `${spellings.canonical}/${name.toLowerCase()}`,
    admit: (release, signer, now) => admitOwn(own, release, signer, now),
  };
  return own;
}

/** Refuses (exit 3, nothing written) a release the policy refuses: its version, its signing key, its approval. */
export function admitOwn(policy: PublishPolicy, release: OwnRelease, signer: SignerInfo, now: Date): void {
  const address = policy.address(release.name);
  const facts = {
    address,
    version: release.version,
    published: undefined,
    ...signedFacts(provenBy(signer), release.shasums),
  };
  const decision = decide(policy.rules, facts, now);
  if (decision.outcome !== 'refused') return;
  throw new VerificationError(
    `${address} ${release.version} is refused by ${policy.file} (${decision.rule}): ${decision.reason}`,
    {
      hint: 'Nothing was written. Sign with a key the policy pins and publish a version it allows, or change the policy in a reviewed change.',
      details: { rule: decision.rule, policy: policy.file },
    },
  );
}
