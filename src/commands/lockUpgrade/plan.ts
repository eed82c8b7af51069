/**
 * The plan of a `provider lock upgrade` run, from the lock files as read and what the registry serves, before any
 * zip is downloaded: the private registry's provider blocks (narrowed by `--only`), and for each the version it
 * moves to (./choose.ts). Other blocks are never touched.
 */
import { canonicalConstraints } from '../../lockfile/constraints.js';
import { matchesPattern } from '../../lockfile/policy.js';
import { readProviderBlock } from '../../lockfile/parse.js';
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
  /** The versions the registry serves for a type, read once per type. */
  served: (type: string) => Promise<ServedVersionDate[]>;
}

/** The private blocks of every file and the version each moves to. */
export async function planUpgrade(input: PlanInput): Promise<PlannedBlock[]> {
  const blocks: PlannedBlock[] = [];
  const byType = new Map<string, Promise<ServedVersionDate[]>>();
  for (const file of input.files) {
    for (const block of file.parsed.providers) {
      const address = block.label.toLowerCase();
      const type = address.split('/').pop() ?? address;
      if (!input.privatePrefixes.some((prefix) => address === `${prefix}/${type}`)) continue;
      if (input.only.length > 0 && !input.only.some((pattern) => matchesPattern(pattern, address))) continue;
      const locked = readProviderBlock(block, file.shown);
      // Checked now, naming the file: a constraint Terraform would not have written is no lock file's.
      const constraints =
        locked.constraints === undefined
          ? undefined
          : canonicalConstraints(locked.constraints, `${file.shown}:${locked.line} constraints`);
      let served = byType.get(type);
      if (served === undefined) byType.set(type, (served = input.served(type)));
      const choice = chooseVersion(await served, locked.version, constraints, input.rules);
      blocks.push({
        file,
        address,
        type,
        line: locked.line,
        from: locked.version,
        to: choice.version,
        held: choice.held,
        none: choice.none,
      });
    }
  }
  return blocks;
}
