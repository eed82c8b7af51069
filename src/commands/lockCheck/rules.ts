/**
 * What the SARIF log of `provider lock check` says of each of its rules (docs/supply-chain.md, "The findings"):
 * GitHub code scanning shows a rule's full description at the top of an alert and its help below, and refuses a
 * rule without them (the SARIF Multitool's GH2012). `name` is the rule's id in PascalCase: SARIF wants the id
 * opaque and the name readable, and the two different (SARIF1001).
 */
import type { LockRule } from '../../lockfile/audit.js';

/** A rule's full description (plain text) and help (Markdown: commands in code spans). */
export interface RuleText {
  fullDescription: string;
  help: string;
}

const REWRITE = 'provider lock --registry --version <v> --name <type> --lock-file <file>';
const APPROVE = 'provider approve <namespace>/<type> <version> --policy <file> --reason "…"';

/** Each rule's texts. */
export const RULE_TEXTS: Record<LockRule, RuleText> = {
  'lock-file-missing': {
    fullDescription:
      "The configuration has no .terraform.lock.hcl: nothing pins the providers' versions or hashes, and every run takes whatever the registries serve that day.",
    help: `Run \`terraform init\` and commit the lock file, then run \`${REWRITE}\` for each provider of the private registry to record every platform's h1:.`,
  },
  'provider-not-allowed': {
    fullDescription:
      'A provider of the lock file comes from elsewhere than the private registry: the public registry, another host or another organization.',
    help: 'Publish it to the private registry (`provider mirror <namespace>/<type>` copies a public provider, verified) and change its source in required_providers, or admit it with `--allow` or `allow:` in the policy file if policy permits.',
  },
  'version-not-served': {
    fullDescription:
      "The private registry does not have the locked version: it was deleted or never published, or the lock file names another organization's provider.",
    help: 'Lock a version the registry serves (`provider versions list`; `terraform init -upgrade` picks one) or publish this one.',
  },
  'version-refused': {
    fullDescription:
      'The private registry has the locked version, but terraform init would refuse what it serves: a missing file, a signature that does not check out against the registered key, a checksum mismatch.',
    help: '`provider check <version> --download` shows the details; publish the version again.',
  },
  'hash-not-served': {
    fullDescription:
      'A zh: of the block is not a line of the SHA256SUMS the private registry serves, or an h1: is not the hash of any package it serves: the block was edited, or locked against another source.',
    help: `Delete that hash (or the block), then rewrite the block from what the registry serves: \`${REWRITE}\`.`,
  },
  'platform-hash-missing': {
    fullDescription:
      "The block has no h1: for a platform runs need (terraform init on a Mac records only darwin's), so a run there that installs from a cache or a mirror cannot match the package.",
    help: `The finding names the h1: the registry serves for that platform; \`${REWRITE}\` records every platform's.`,
  },
  'platform-not-served': {
    fullDescription:
      'The private registry serves no package of the locked version for a platform runs need: runs there cannot install it at all.',
    help: 'Build and publish the version for that platform, or lock a version that has it.',
  },
  'version-not-allowed': {
    fullDescription: "The locked version does not meet the policy's versions constraints for that provider.",
    help: "Constrain required_providers to the policy's range and run `terraform init -upgrade`, or change the policy.",
  },
  'version-not-approved': {
    fullDescription:
      'The policy requires an approval for that provider (approval: required), the policy file holds no approval record of the locked version, and no auto-approve rule admits it.',
    help: `Review the version, then record its approval in the policy file in a reviewed change: \`${APPROVE}\`; or lock a version the policy admits.`,
  },
  'version-in-cooldown': {
    fullDescription:
      "The locked version is younger than the policy's min-age for that provider (counted from its created-at in the private registry): it is held until the date the finding names.",
    help: `Wait until the date the finding names and run the check again, lock an older version, or approve it after a review (an approval lifts the cooldown): \`${APPROVE}\`.`,
  },
  'key-not-allowed': {
    fullDescription:
      "The private registry serves the locked version signed by a key the policy's keys do not pin: a valid signature by another registered key, as a compromised publisher account would make.",
    help: "Do not lock this version. Find out who registered and used the key (`provider gpg-keys list`) before anything installs it, and lock a version signed by a pinned key; if the key was rotated on purpose, add it to the policy's `keys` in a reviewed change.",
  },
  'approval-does-not-match': {
    fullDescription:
      'The policy file approves the locked version for other bytes or another signing key than the private registry serves now: the SHA-256 of its SHA256SUMS, or the key that signed it, changed after the approval.',
    help: `Find out why before anything uses the version (was it deleted and published again?). If what the registry serves now is right, remove the old record in a reviewed change and approve it again: \`${APPROVE}\`; else lock another version.`,
  },
};

/** A rule id in PascalCase (`hash-not-served` → `HashNotServed`). */
export function ruleName(id: LockRule): string {
  return id.replace(/(?:^|-)([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Markdown without its code spans' backticks, for the plain text form. */
export function plainText(markdown: string): string {
  return markdown.replace(/`([^`]*)`/g, '$1');
}
