/**
 * The GitHub Action (action.yml at the repository root runs `action/main.cjs`, this module bundled by
 * scripts/bundle.mjs from ./actionEntry.ts; in src/cli/ because, like main.ts, it is a front end that reads the
 * process): `provider publish` (or, with `command: lock upgrade`, `provider lock upgrade`: ./actionLock.ts)
 * with the step's inputs as flags, the token and the signer's key passed
 * through the environment (never on a command line), the token masked before anything is printed, and the
 * result as step outputs. Progress, warnings, `::error::` annotations and the step summary are the CLI's own
 * (it writes them under `GITHUB_ACTIONS=true`), and the action's own lines pass through the same output sink
 * (src/ui/output.ts: redacted, never a workflow command); the exit code is the CLI's, so the step fails as the
 * command does. A bad input fails the same way: exit 2, an `::error::`, the `json` output and the summary.
 *
 * The runner hands inputs over as `INPUT_<NAME>` (upper case, spaces as `_`, hyphens kept) and reads outputs
 * from the file named by `GITHUB_OUTPUT` (`name<<delimiter` blocks). Reference: docs.github.com, "Metadata
 * syntax for GitHub Actions" (runs.using node24) and "Workflow commands for GitHub Actions" (add-mask,
 * GITHUB_OUTPUT multiline values).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { ExitCode, UsageError, toErrorDocument } from '../errors.js';
import { renderProviderBlock } from '../lockfile/render.js';
import type { PublishDocument } from '../publish/document.js';
import { appendStepSummary, failureSummary } from '../ui/githubSummary.js';
import { Output, escapeCommandData } from '../ui/output.js';
import { run } from './main.js';
import { actionInput, booleanInput, cliEnvironment, type ActionEnv } from './actionInputs.js';
import {
  actionCommand,
  lockUpgradeInvocation,
  lockUpgradeOutputs,
  type ActionCommand,
} from './actionLock.js';
import type { UpgradeDocument } from '../commands/lockUpgrade/report.js';
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

/** The `provider publish` command line the inputs make, and the environment it runs with. */
export function publishInvocation(env: ActionIo['env']): {
  argv: string[];
  env: Record<string, string | undefined>;
} {
  // Each value joined to its flag (`--name=<value>`), and the folder after `--`: an input that looks like a
  // flag (`directory: --hostname=…`) stays the value it was given, never another option.
  const argv = ['publish', '--json'];
  for (const [input, flag] of Object.entries(VALUE_INPUTS)) {
    const value = actionInput(env, input);
    if (value !== '') argv.push(`${flag}=${value}`);
  }
  if (booleanInput(env, 'dry-run', false)) argv.push('--dry-run');
  if (booleanInput(env, 'verify-first', false)) argv.push('--verify-first');
  if (!booleanInput(env, 'wait', true)) argv.push('--no-wait');
  if (!booleanInput(env, 'check', true)) argv.push('--no-check');
  // One tag per line or comma-separated: `key=value` each (the CLI checks them before any request).
  for (const tag of actionInput(env, 'tags').split(/[\n,]/)) {
    if (tag.trim() !== '') argv.push(`--tag=${tag.trim()}`);
  }
  argv.push('--', actionInput(env, 'directory') || 'dist');
  const cliEnv = cliEnvironment(env);
  const key = actionInput(env, 'gpg-public-key');
  if (key !== '') cliEnv.PROVIDER_GPG_KEY = key;
  return { argv, env: cliEnv };
}

/** Appends one output to `$GITHUB_OUTPUT` in the multiline form, with a delimiter the value cannot contain. */
function setOutput(env: ActionEnv, name: string, value: string): void {
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
  if (token !== '') io.stdout.write(`::add-mask::${escapeCommandData(token)}\n`);
  const output = new Output({ stdout: io.stdout, stderr: io.stderr, env: io.env });
  output.addSecret(token);
  let command: ActionCommand = 'publish';
  let invocation: ReturnType<typeof publishInvocation>;
  try {
    command = actionCommand(io.env);
    invocation = command === 'publish' ? publishInvocation(io.env) : lockUpgradeInvocation(io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // As a failed command: the error and its annotation, the `json` output, the step summary.
    output.failure(error);
    setOutput(io.env, 'json', JSON.stringify({ ok: false, error: toErrorDocument(error) }));
    await appendStepSummary(output, io.env, failureSummary(`provider ${command}`, error, ExitCode.usage));
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
  if (command === 'lock upgrade') return lockUpgradeResult(io.env, doc, code);
  if (code !== ExitCode.ok || doc.ok !== true || !('lock' in doc)) {
    // A failure still hands later steps the document (the error, or what a partial run did): `if: failure()`.
    setOutput(io.env, 'json', JSON.stringify(doc));
    return code;
  }
  const outputs = actionOutputs(doc);
  for (const [name, value] of Object.entries(outputs)) setOutput(io.env, name, value);
  const done = doc.dryRun ? 'would publish' : 'published';
  const lines = [
    `${doc.provider.namespace}/${doc.provider.name} ${doc.version.version} ${done} on ${doc.provider.hostname}: ` +
      `${doc.platforms.length} platforms, signed by ${doc.key.keyId}`,
    '',
    'Lock file block for every platform (outputs.lock-block):',
    ...outputs['lock-block']!.split('\n'),
  ];
  for (const line of lines) output.result(line);
  return code;
}

/**
 * A lock upgrade's outputs: every one when its document came (exit 3 too: the files of the providers that
 * verified were written, and a later step may still open their pull request); the error's `json` otherwise.
 */
function lockUpgradeResult(env: ActionEnv, doc: { ok?: boolean }, code: number): number {
  if (!('files' in doc)) {
    setOutput(env, 'json', JSON.stringify(doc));
    return code;
  }
  const outputs = lockUpgradeOutputs(doc as UpgradeDocument);
  for (const [name, value] of Object.entries(outputs)) setOutput(env, name, value);
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
