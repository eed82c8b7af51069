/**
 * The GitHub Action's inputs as the runner hands them over (`INPUT_<NAME>`: upper case, spaces as `_`, hyphens
 * kept), and the environment the CLI runs with. Reference: docs.github.com, "Metadata syntax for GitHub Actions".
 */
import { ACTION_VARIABLE } from '../config/credentials.js';
import { UsageError } from '../errors.js';

/** The step's environment. */
export type ActionEnv = Record<string, string | undefined>;

/** An input as the runner passes it: `INPUT_` + the name in upper case with spaces as `_`; trimmed. */
export function actionInput(env: ActionEnv, name: string): string {
  return (env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
}

/** A boolean input as `core.getBooleanInput` reads it (YAML 1.2 core schema); empty gives the default. */
export function booleanInput(env: ActionEnv, name: string, fallback: boolean): boolean {
  const value = actionInput(env, name);
  if (value === '') return fallback;
  if (['true', 'True', 'TRUE'].includes(value)) return true;
  if (['false', 'False', 'FALSE'].includes(value)) return false;
  throw new UsageError(`Input "${name}" must be true or false, not "${value}"`, {
    hint: `Give \`${name}\` one of true, True, TRUE, false, False, FALSE (YAML 1.2 booleans), or leave it out for ${String(fallback)}.`,
    details: { input: name, value },
  });
}

/**
 * The environment the CLI runs with: the step's without the inputs (the token only as TFE_TOKEN), marked as
 * the action's, so that its token hints name the `token` input.
 */
export function cliEnvironment(env: ActionEnv): Record<string, string | undefined> {
  const cliEnv: Record<string, string | undefined> = { [ACTION_VARIABLE]: 'true' };
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith('INPUT_')) cliEnv[key] = value;
  }
  const token = actionInput(env, 'token');
  if (token !== '') {
    // The input wins: the CLI would prefer a TF_TOKEN_<host> of the step's environment (set for terraform
    // init, say) over TFE_TOKEN, and act with another identity than the one the workflow names.
    for (const key of Object.keys(cliEnv)) if (/^TF_TOKEN_/i.test(key)) delete cliEnv[key];
    cliEnv.TFE_TOKEN = token;
  }
  return cliEnv;
}
