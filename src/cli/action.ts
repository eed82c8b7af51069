/**
 * The GitHub Action (action.yml at the repository root runs `action/main.cjs`, this module bundled by
 * scripts/bundle.mjs from ./actionEntry.ts; in src/cli/ because, like main.ts, it is a front end that reads the
 * process): `provider publish` with the step's inputs as flags, the token and the signer's key passed
 * through the environment (never on a command line), the token masked before anything is printed, and the
 * result as step outputs. Progress, warnings, `::error::` annotations and the step summary are the CLI's own
 * (it writes them under `GITHUB_ACTIONS=true`); the exit code is the CLI's, so the step fails as the command does.
 *
 * The runner hands inputs over as `INPUT_<NAME>` (upper case, spaces as `_`, hyphens kept) and reads outputs
 * from the file named by `GITHUB_OUTPUT` (`name<<delimiter` blocks). Reference: docs.github.com, "Metadata
 * syntax for GitHub Actions" (runs.using node24) and "Workflow commands for GitHub Actions" (add-mask,
 * GITHUB_OUTPUT multiline values).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { ExitCode } from '../errors.js';
import { renderProviderBlock } from '../lockfile/render.js';
import type { PublishDocument } from '../publish/document.js';
import { run } from './main.js';
import type { CliIo } from './context.js';

/** What the action reads and writes: the step's environment and its two output streams. */
export interface ActionIo {
  env: Record<string, string | undefined>;
  cwd: string;
  homeDir: string;
  stdout: { write(text: string): unknown };
  stderr: CliIo['stderr'];
  signal: AbortSignal;
}

/** The inputs that become flags as they are (`name: --flag`). */
const VALUE_INPUTS: Record<string, string> = {
  hostname: '--hostname',
  organization: '--organization',
  namespace: '--namespace',
  name: '--name',
  version: '--version',
  protocols: '--protocols',
  concurrency: '--concurrency',
  'wait-timeout': '--wait-timeout',
};

/** An input as the runner passes it: `INPUT_` + the name in upper case with spaces as `_`; trimmed. */
export function actionInput(env: ActionIo['env'], name: string): string {
  return (env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
}

/** A boolean input as `core.getBooleanInput` reads it (YAML 1.2 core schema); empty gives the default. */
function booleanInput(env: ActionIo['env'], name: string, fallback: boolean): boolean {
  const value = actionInput(env, name);
  if (value === '') return fallback;
  if (['true', 'True', 'TRUE'].includes(value)) return true;
  if (['false', 'False', 'FALSE'].includes(value)) return false;
  throw new ActionInputError(`Input "${name}" must be true or false, not "${value}"`);
}

/** A bad input: reported as a usage error (exit 2) before the CLI runs. */
class ActionInputError extends Error {}

/** The `provider publish` command line the inputs make, and the environment it runs with. */
export function publishInvocation(env: ActionIo['env']): {
  argv: string[];
  env: Record<string, string | undefined>;
} {
  const argv = ['publish', actionInput(env, 'directory') || 'dist', '--json'];
  for (const [input, flag] of Object.entries(VALUE_INPUTS)) {
    const value = actionInput(env, input);
    if (value !== '') argv.push(flag, value);
  }
  if (booleanInput(env, 'dry-run', false)) argv.push('--dry-run');
  if (!booleanInput(env, 'wait', true)) argv.push('--no-wait');
  if (!booleanInput(env, 'check', true)) argv.push('--no-check');
  // One tag per line or comma-separated: `key=value` each (the CLI checks them before any request).
  for (const tag of actionInput(env, 'tags').split(/[\n,]/)) {
    if (tag.trim() !== '') argv.push('--tag', tag.trim());
  }
  const cliEnv: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) {
    // The CLI gets the step's environment without the inputs: the token only as TFE_TOKEN below.
    if (!key.startsWith('INPUT_')) cliEnv[key] = value;
  }
  const token = actionInput(env, 'token');
  if (token !== '') {
    // The input wins: the CLI would prefer a TF_TOKEN_<host> of the step's environment (set for terraform
    // init, say) over TFE_TOKEN, and publish with another identity than the one the workflow names.
    for (const key of Object.keys(cliEnv)) if (/^TF_TOKEN_/i.test(key)) delete cliEnv[key];
    cliEnv.TFE_TOKEN = token;
  }
  const key = actionInput(env, 'gpg-public-key');
  if (key !== '') cliEnv.PROVIDER_GPG_KEY = key;
  return { argv, env: cliEnv };
}

/** Appends one output to `$GITHUB_OUTPUT` in the multiline form, with a delimiter the value cannot contain. */
function setOutput(env: ActionIo['env'], name: string, value: string): void {
  const file = env.GITHUB_OUTPUT;
  if (file === undefined || file === '') return;
  const delimiter = `ghadelimiter_${randomUUID()}`;
  appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}

/** The step outputs of a publish document. */
export function actionOutputs(doc: PublishDocument): Record<string, string> {
  const block = renderProviderBlock({
    address: doc.lock.address,
    version: doc.lock.version,
    hashes: doc.lock.hashes,
  });
  return {
    version: doc.version.version,
    'key-id': doc.key.keyId,
    platforms: JSON.stringify(
      doc.platforms.map((p) => ({
        os: p.os,
        arch: p.arch,
        filename: p.filename,
        shasum: p.shasum,
        hashes: p.hashes,
      })),
    ),
    'lock-block': block,
    'dry-run': String(doc.dryRun),
    json: JSON.stringify(doc),
  };
}

/** Runs the action; resolves to the exit code (the CLI's). Never exits itself. */
export async function runAction(io: ActionIo): Promise<number> {
  const token = actionInput(io.env, 'token');
  // Before anything else is printed: the runner replaces the value with *** in every later log line.
  if (token !== '') io.stdout.write(`::add-mask::${token}\n`);
  let invocation: ReturnType<typeof publishInvocation>;
  try {
    invocation = publishInvocation(io.env);
  } catch (error) {
    if (!(error instanceof ActionInputError)) throw error;
    io.stderr.write(`error: ${error.message}\n::error::${error.message}\n`);
    return ExitCode.usage;
  }
  let captured = '';
  const cli: CliIo = {
    argv: invocation.argv,
    env: invocation.env,
    cwd: io.cwd,
    homeDir: io.homeDir,
    stdout: { write: (text: string) => ((captured += text), true) },
    stderr: io.stderr,
    stdinIsTTY: false,
    signal: io.signal,
  };
  const code = await run(cli);
  let doc: { ok?: boolean } | PublishDocument;
  try {
    doc = JSON.parse(captured) as PublishDocument;
  } catch {
    io.stdout.write(captured);
    return code === ExitCode.ok ? ExitCode.internal : code;
  }
  if (code !== ExitCode.ok || doc.ok !== true || !('lock' in doc)) {
    // A failure still hands later steps the document (the error, or what a partial run did): `if: failure()`.
    setOutput(io.env, 'json', JSON.stringify(doc));
    return code;
  }
  const outputs = actionOutputs(doc);
  for (const [name, value] of Object.entries(outputs)) setOutput(io.env, name, value);
  const done = doc.dryRun ? 'would publish' : 'published';
  io.stdout.write(
    `${doc.provider.namespace}/${doc.provider.name} ${doc.version.version} ${done} on ${doc.provider.hostname}: ` +
      `${doc.platforms.length} platforms, signed by ${doc.key.keyId}\n\n` +
      `Lock file block for every platform (outputs.lock-block):\n${outputs['lock-block']}\n`,
  );
  return code;
}

/** The bundle's entry: the real process as the io. */
export async function actionMain(): Promise<void> {
  const controller = new AbortController();
  process.on('SIGTERM', () => controller.abort('SIGTERM'));
  process.on('SIGINT', () => controller.abort('SIGINT'));
  process.exitCode = await runAction({
    env: process.env,
    cwd: process.cwd(),
    homeDir: homedir(),
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
  });
}
