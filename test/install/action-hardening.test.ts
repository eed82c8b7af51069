/**
 * The GitHub Action as the runner runs it (./actionRun.ts), against inputs and server answers a hostile review
 * tried (hardening round 3, docs/reliability.md): the key it registers is the text the other forms register, a
 * server's words never become workflow commands, a `directory` that looks like a flag stays a folder name, and a
 * bad input or a failed publish leaves the `json` output, an annotation naming the input and the step summary.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorPerTest, onRequestStart } from '../helpers/emulator/index.js';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';
import { publishInputs, runAction, workflowCommands } from './actionRun.js';
import {
  FAST,
  RELEASE,
  SIGNER_KEY,
  SIGNER_KEY_FILE,
  expectNoTokens,
  tamperedRelease,
  writeRequests,
} from './helpers.js';

const emulator = emulatorPerTest();

/** A registry refusal whose detail holds line breaks and workflow commands, old and new forms. */
const HOSTILE_DETAIL = [
  'name is invalid',
  '::set-output name=version::9.9.9',
  '::add-mask::shown-for-ever',
  '  ::stop-commands::paused',
  'and ##[error]an old-form command mid-line\r::warning::after a CR',
].join('\n');

/** The armor each registry holds (one key each here). */
function registered(e: Emulator): string[] {
  return e.store.data.gpgKeys.map((k) => k.asciiArmor);
}

describe('item 8: one key, one registered text, whichever form publishes it', () => {
  it('the Action, publish --key <file> and PROVIDER_GPG_KEY (the GitLab job) register the trimmed block', async () => {
    const [viaAction, viaFile, viaVariable] = await Promise.all([emulator(), emulator(), emulator()]);
    // The runner hands the input over as written; GitHub's toolkit, and this action, trim it.
    const action = await runAction(publishInputs(viaAction, { 'gpg-public-key': `${SIGNER_KEY}\n` }));
    expect(action.exitCode, action.stderr).toBe(0);
    const cli = (e: Emulator, args: string[], env: Record<string, string> = {}) =>
      runCli(['publish', RELEASE, ...args, '--hostname', e.url, '--organization', e.organization], {
        env: { TFE_TOKEN: e.ownerToken, ...FAST, ...env },
        cwd: tempRoot('cli'),
      });
    expect((await cli(viaFile, ['--key', SIGNER_KEY_FILE])).exitCode).toBe(0);
    expect((await cli(viaVariable, [], { PROVIDER_GPG_KEY: SIGNER_KEY })).exitCode).toBe(0);
    const trimmed = SIGNER_KEY.trim();
    expect(SIGNER_KEY).not.toBe(trimmed);
    expect(registered(viaAction)).toEqual([trimmed]);
    expect(registered(viaFile)).toEqual([trimmed]);
    expect(registered(viaVariable)).toEqual([trimmed]);
  });
});

describe("item 9: a server's words never become workflow commands", () => {
  it('a refusal whose detail holds ::set-output, ::add-mask::, ::stop-commands:: and ##[: escaped, inert', async () => {
    const e = await emulator();
    onRequestStart(e, (request) =>
      request.method === 'POST' ? { status: 422, detail: HOSTILE_DETAIL } : undefined,
    );
    const run = await runAction(publishInputs(e));
    expect(run.exitCode, run.stderr).toBe(4);
    // The only commands in the log are the action's own: the mask first, then the CLI's error annotation.
    expect(workflowCommands(run.stdout)).toEqual([`::add-mask::${e.ownerToken}`]);
    const commands = workflowCommands(run.stderr);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatch(/^::error::POST \/api\/v2\/organizations\/.* was refused: 422 /);
    // The detail is there, each of its line breaks escaped within the line that shows it.
    expect(run.stderr).toContain(
      'name is invalid%0A::set-output name=version::9.9.9%0A::add-mask::shown-for-ever%0A  ::stop-commands::paused%0Aand ##%5Berror]',
    );
    expect(run.stderr).toContain('%0D::warning::after a CR');
    // Only the failure's document reached GITHUB_OUTPUT, with the detail as the server gave it.
    expect(Object.keys(run.outputs)).toEqual(['json']);
    const doc = JSON.parse(run.outputs.json!) as { error: { code: string; message: string } };
    expect(doc.error).toMatchObject({ code: 'api' });
    expect(doc.error.message).toContain(HOSTILE_DETAIL);
  });
});

describe('item 10: a directory input that looks like a flag is a folder name', () => {
  it('directory: --hostname=<another host> sends nothing there: exit 2 naming the folder', async () => {
    const [e, elsewhere] = await Promise.all([emulator(), emulator()]);
    const run = await runAction(
      {
        directory: `--hostname=${elsewhere.url}`,
        organization: e.organization,
        token: e.ownerToken,
        'gpg-public-key': SIGNER_KEY,
      },
      // A release in the workspace's default folder: taken as a flag, the input would publish it to elsewhere.
      { workspace: (dir) => fs.cpSync(RELEASE, path.join(dir, 'dist'), { recursive: true }) },
    );
    expect(elsewhere.requestLog.records).toEqual([]);
    expect(e.requestLog.records).toEqual([]);
    expect(run.exitCode, run.stderr).toBe(2);
    // The folder's path as resolved (path.resolve makes the URL's // one /).
    expect(run.stderr).toMatch(
      /^error: No release folder here: \S*\/--hostname=http:\/127\.0\.0\.1:\d+ does not exist/m,
    );
    expect(JSON.parse(run.outputs.json!)).toMatchObject({ ok: false, error: { code: 'usage' } });
  });
});

describe('item 12: a bad input or a failed publish, as the workflow sees it', () => {
  it('dry-run: maybe → exit 2, the json output, an annotation and a step summary; nothing sent', async () => {
    const e = await emulator();
    const run = await runAction(publishInputs(e, { 'dry-run': 'maybe' }));
    expect(run.exitCode).toBe(2);
    expect(e.requestLog.records).toEqual([]);
    expect(JSON.parse(run.outputs.json!)).toEqual({
      ok: false,
      error: {
        code: 'usage',
        message: 'Input "dry-run" must be true or false, not "maybe"',
        hint: expect.stringContaining('true, True, TRUE, false, False, FALSE') as unknown,
        details: { input: 'dry-run', value: 'maybe' },
      },
    });
    expect(run.stderr).toMatch(/^::error::Input "dry-run" must be true or false, not "maybe" — Give/m);
    expect(run.summary).toContain('### provider publish failed (exit 2)');
    expect(run.summary).toContain('    error: Input "dry-run" must be true or false, not "maybe"');
    expectNoTokens(run.stdout.split('\n').slice(1).join('\n') + run.stderr + run.summary, e, 'the log');
  });

  it('no token: the hint names the token input, not terraform login', async () => {
    const e = await emulator();
    const { token: _left, ...inputs } = publishInputs(e);
    const run = await runAction(inputs);
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^::error::No API token was found for .* — Give the step's `token` input/m);
    expect(run.stderr).not.toContain('terraform login');
    expect(JSON.parse(run.outputs.json!)).toMatchObject({
      error: { hint: expect.stringContaining("the step's `token` input") as unknown },
    });
    expect(run.summary).toContain('### provider publish failed (exit 2)');
  });

  it('a token the registry refuses (401): the hint names the token input', async () => {
    const e = await emulator();
    const run = await runAction(publishInputs(e, { token: 'not-a-valid-token-at-all' }));
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toContain("invalid or expired. Give the step's `token` input a valid API token");
    expect(run.stderr).not.toContain('terraform login');
    expect(run.summary).toContain('### provider publish failed (exit 4)');
  });

  it('a failed publish (a tampered zip) writes the step summary with the error and its hint', async () => {
    const e = await emulator();
    const run = await runAction(publishInputs(e, { directory: tamperedRelease(tempRoot('bad')) }));
    expect(run.exitCode, run.stderr).toBe(3);
    const [heading, blank, ...block] = run.summary.trimEnd().split('\n');
    expect([heading, blank]).toEqual(['### provider publish failed (exit 3)', '']);
    expect(block[0]).toMatch(/^ {4}error: .*linux_amd64\.zip/);
    expect(block.some((line) => line.startsWith('    hint: '))).toBe(true);
    // Every line of the block indented: a code block, whatever the message holds.
    expect(block.every((line) => line.startsWith('    '))).toBe(true);
    expect(writeRequests(e)).toEqual([]);
  });
});
