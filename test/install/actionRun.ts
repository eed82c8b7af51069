/**
 * Running the GitHub Action as the runner runs it: `node action/main.cjs` (the committed bundle, action.yml's
 * runs.main) with the inputs as `INPUT_<NAME>` variables, `GITHUB_ACTIONS=true`, `GITHUB_OUTPUT` and
 * `GITHUB_STEP_SUMMARY` files, in a workspace of its own. Runner conventions from docs.github.com: "Metadata
 * syntax for GitHub Actions" (inputs → INPUT_ variables, upper case, spaces as underscores) and "Workflow
 * commands" (::add-mask::, GITHUB_OUTPUT name<<delimiter).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST, RELEASE, SIGNER_KEY, runProcess } from './helpers.js';

export const BUNDLE = path.join(REPO_ROOT, 'action', 'main.cjs');

/** The outputs a step wrote to `$GITHUB_OUTPUT`, parsed as the runner parses the file. */
export function readOutputs(file: string): Record<string, string> {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc === null) {
      const eq = line.indexOf('=');
      outputs[line.slice(0, eq)] = line.slice(eq + 1);
      continue;
    }
    const [, name, delimiter] = heredoc;
    const end = lines.indexOf(delimiter!, i + 1);
    expect(end, `the closing delimiter of ${name}`).toBeGreaterThan(i);
    outputs[name!] = lines.slice(i + 1, end).join('\n');
    i = end;
  }
  return outputs;
}

/** The inputs of a publish of the fixture release to `e` with its owner token and the signer's key. */
export function publishInputs(e: Emulator, extra: Record<string, string> = {}): Record<string, string> {
  const inputs: Record<string, string> = {
    directory: RELEASE,
    organization: e.organization,
    hostname: e.url,
    token: e.ownerToken,
    'gpg-public-key': SIGNER_KEY,
  };
  return { ...inputs, ...extra };
}

/** Options of `runAction`. */
export interface RunActionOptions {
  /** Variables of the step's `env:` (and the runner's own) besides the inputs. */
  env?: Record<string, string>;
  /** Prepares the fresh workspace (the working directory) before the step runs. */
  workspace?: (dir: string) => void;
}

/** Runs the bundle in a fresh workspace with the runner's variables and `inputs` as INPUT_ variables. */
export async function runAction(inputs: Record<string, string>, options: RunActionOptions = {}) {
  const workspace = tempRoot('action');
  options.workspace?.(workspace);
  const files = {
    output: path.join(workspace, 'github_output'),
    summary: path.join(workspace, 'step_summary'),
  };
  const env: Record<string, string> = {
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    ...FAST,
    ...options.env,
  };
  for (const [name, value] of Object.entries(inputs))
    env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
  const result = await runProcess(process.execPath, [BUNDLE], { cwd: workspace, env });
  const summary = fs.existsSync(files.summary) ? fs.readFileSync(files.summary, 'utf8') : '';
  return { ...result, outputs: readOutputs(files.output), summary, workspace };
}

/**
 * The lines of a step's log the runner takes for workflow commands: `::name…` after leading blanks
 * (`TryParseV2`), or `##[name…]` anywhere in the line (`TryParse`, the old form, still honoured), as
 * actions/runner src/Runner.Common/ActionCommand.cs reads them; lines split as the runner splits (CR, LF).
 */
export function workflowCommands(log: string): string[] {
  return log.split(/\r\n|\r|\n/).filter((line) => /^\s*::/.test(line) || line.includes('##['));
}
