/**
 * The plan of a `provider lock upgrade` run, from the lock files as read and what the registry serves, before any
 * zip is downloaded: the private registry's provider blocks (narrowed by `--only`), and for each the version it
 * moves to (./choose.ts). Other blocks are never touched.
 */
import { canonicalConstraints } from '../../lockfile/constraints.js';
import { matchesPattern } from '../../lockfile/policy.js';
import { findProvider, LockFileError, readProviderBlock } from '../../lockfile/parse.js';
import { valid } from 'semver';
import type { Decision } from '../../lockfile/admission.js';
import { chooseVersion, type ChoiceRules, type HeldVersion, type ServedVersionDate } from './choose.js';
import type { LockFileRead } from './files.js';

/** One private provider block of one lock file, and where it moves. */
export interface PlannedBlock {
  file: LockFileRead;
  /** The address as the block writes it (lower-cased). */
  address: string;
  /** The provider type (`example`). */
  type: string;
  line: number;
  from: string;
  /** The version chosen (maybe `from` itself); undefined when none could be. */
  to: string | undefined;
  held: HeldVersion[];
  /** When the registry created the version chosen (for the policy's decision once it is verified). */
  createdAt?: Date | undefined;
  none?: string | undefined;
}

/** What the plan needs. */
export interface PlanInput {
  files: LockFileRead[];
  /** `host/namespace` prefixes of the private registry (lower-case): its hostname's, and `localterraform.com`'s. */
  privatePrefixes: string[];
  /** `--only` patterns, checked; none: every private block. */
  only: string[];
  rules: ChoiceRules;
  /** The versions the registry serves for a type, read once per type; undefined when it has no such provider. */
  served: (type: string) => Promise<ServedVersionDate[] | undefined>;
  /** `--policy`: its decision about a version of the provider at an address, before verification. */
  admit?: ((address: string, candidate: ServedVersionDate) => Decision) | undefined;
}

/** A private block decoded: what its file says, checked before any request. */
interface DecodedBlock {
  file: LockFileRead;
  address: string;
  type: string;
  line: number;
  version: string;
  constraints: string | undefined;
}

/**
 * The private blocks of every file and the version each moves to. Every block is decoded and checked first (its
 * version, its constraints, one block per address), so that a lock file Terraform would refuse is exit 2 naming
 * its line before any request; then each provider's versions are read once.
 */
export async function planUpgrade(input: PlanInput): Promise<PlannedBlock[]> {
  const decoded = input.files.flatMap((file) => decodeBlocks(file, input));
  const byType = new Map<string, Promise<ServedVersionDate[] | undefined>>();
  const blocks: PlannedBlock[] = [];
  for (const block of decoded) {
    let served = byType.get(block.type);
    if (served === undefined) byType.set(block.type, (served = input.served(block.type)));
    const versions = await served;
    const { file, address, type, line, version } = block;
    const base = { file, address, type, line, from: version };
    if (versions === undefined) {
      blocks.push({ ...base, to: undefined, held: [], none: `the registry does not serve ${address}` });
      continue;
    }
    const { admit } = input;
    const rules =
      admit === undefined
        ? input.rules
        : { ...input.rules, admit: (c: ServedVersionDate) => admit(address, c) };
    const choice = chooseVersion(versions, version, block.constraints, rules);
    const createdAt = versions.find((v) => v.version === choice.version)?.createdAt;
    blocks.push({ ...base, to: choice.version, held: choice.held, none: choice.none, createdAt });
  }
  return blocks;
}

/** A file's private blocks (narrowed by `--only`), decoded; LockFileError naming the line of what is wrong. */
function decodeBlocks(file: LockFileRead, input: PlanInput): DecodedBlock[] {
  const decoded: DecodedBlock[] = [];
  for (const block of file.parsed.providers) {
    const address = block.label.toLowerCase();
    const type = address.split('/').pop() ?? address;
    if (!input.privatePrefixes.some((prefix) => address === `${prefix}/${type}`)) continue;
    if (input.only.length > 0 && !input.only.some((pattern) => matchesPattern(pattern, address))) continue;
    const locked = readProviderBlock(block, file.shown);
    const twice = findProvider(file.parsed, address);
    if (twice.length > 1) {
      throw new LockFileError(
        `${file.shown}:${twice[1]!.line}: ${address} has a second block (the first on line ${twice[0]!.line})`,
        {
          hint: 'Terraform refuses a lock file with two blocks for one provider; keep one. It was not changed.',
          details: { file: file.shown, line: twice[1]!.line },
        },
      );
    }
    if (valid(locked.version) !== locked.version) {
      throw new LockFileError(
        `${file.shown}:${locked.line}: version ${JSON.stringify(locked.version)} is not a version`,
        {
          hint: 'Terraform writes MAJOR.MINOR.PATCH there; run terraform init to rewrite the file. It was not changed.',
          details: { file: file.shown, line: locked.line },
        },
      );
    }
    // A constraint Terraform would not have written is no lock file's.
    const constraints =
      locked.constraints === undefined
        ? undefined
        : canonicalConstraints(locked.constraints, `${file.shown}:${locked.line} constraints`);
    decoded.push({ file, address, type, line: locked.line, version: locked.version, constraints });
  }
  return decoded;
}
