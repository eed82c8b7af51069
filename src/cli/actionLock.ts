/**
 * The GitHub Action's `command: lock upgrade`: `provider lock upgrade` with the step's inputs as flags, and its
 * result as the outputs a workflow needs to open a pull request (`changed`, `changed-files`, `json`). An input that
 * only `publish` reads (and has no default) is refused with exit 2, as one only `lock upgrade` reads is refused
 * for `publish`: a workflow that names an input expects it to act.
 */
import { UsageError } from '../errors.js';
import type { UpgradeDocument } from '../commands/lockUpgrade/report.js';
import { actionInput, booleanInput, cliEnvironment, type ActionEnv } from './actionInputs.js';

/** The commands the action runs (`command` input). */
export type ActionCommand = 'publish' | 'lock upgrade';

/** The inputs only `publish` reads that have no default (so that a value is the workflow's). */
const PUBLISH_ONLY = ['name', 'protocols', 'concurrency', 'wait-timeout', 'tags', 'gpg-public-key'];
/** The inputs only `lock upgrade` reads that have no default. */
const LOCK_ONLY = ['paths', 'only', 'to', 'min-age', 'platforms'];
/** The lock upgrade inputs that become flags as they are. */
const LOCK_VALUES: Record<string, string> = {
  hostname: '--hostname',
  organization: '--organization',
  namespace: '--namespace',
  version: '--version',
  to: '--to',
  'min-age': '--min-age',
};

/** The `command` input: `publish` (the default) or `lock upgrade`. */
export function actionCommand(env: ActionEnv): ActionCommand {
  const command = actionInput(env, 'command').replace(/\s+/g, ' ') || 'publish';
  if (command !== 'publish' && command !== 'lock upgrade') {
    throw new UsageError(`Input "command" must be publish or lock upgrade, not "${command}"`, {
      hint: 'Leave `command` out to publish a release, or give `command: lock upgrade` to move lock files.',
      details: { input: 'command', value: command },
    });
  }
  const others = command === 'publish' ? LOCK_ONLY : PUBLISH_ONLY;
  const stray = others.find((input) => actionInput(env, input) !== '');
  if (stray !== undefined) {
    const other = command === 'publish' ? 'lock upgrade' : 'publish';
    throw new UsageError(`Input "${stray}" is read by command ${other}, and this step runs ${command}`, {
      hint: `Remove \`${stray}\` from the step's with:, or set \`command: ${other}\` if that is what the step is for.`,
      details: { input: stray, command },
    });
  }
  return command;
}

/** A list input: one item per line, or (`commas`) comma-separated too; blanks dropped. */
function listInput(env: ActionEnv, name: string, commas: boolean): string[] {
  return actionInput(env, name)
    .split(commas ? /[\n,]/ : /\n/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** The `provider lock upgrade` command line the inputs make, and the environment it runs with. */
export function lockUpgradeInvocation(env: ActionEnv): {
  argv: string[];
  env: Record<string, string | undefined>;
} {
  // Each value joined to its flag, and the paths after `--`: an input that looks like a flag stays a value.
  const argv = ['lock', 'upgrade', '--json'];
  for (const [input, flag] of Object.entries(LOCK_VALUES)) {
    const value = actionInput(env, input);
    if (value !== '') argv.push(`${flag}=${value}`);
  }
  for (const pattern of listInput(env, 'only', true)) argv.push(`--only=${pattern}`);
  for (const platform of listInput(env, 'platforms', true)) argv.push(`--platform=${platform}`);
  if (booleanInput(env, 'recursive', false)) argv.push('--recursive');
  if (booleanInput(env, 'dry-run', false)) argv.push('--dry-run');
  // Paths one per line only: a folder's name may hold a comma.
  argv.push('--', ...listInput(env, 'paths', false));
  return { argv, env: cliEnvironment(env) };
}

/** The step outputs of a lock upgrade document. */
export function lockUpgradeOutputs(doc: UpgradeDocument): Record<string, string> {
  const changed = doc.files.filter((f) => f.changed).map((f) => f.file);
  return {
    changed: String(changed.length > 0),
    'changed-files': changed.join('\n'),
    'dry-run': String(doc.dryRun),
    json: JSON.stringify(doc),
  };
}
