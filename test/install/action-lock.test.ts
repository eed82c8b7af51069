/**
 * The GitHub Action's `command: lock upgrade`, as the runner runs the bundle (./actionRun.ts): the lock files of
 * the workspace moved to what the emulator's private registry serves, the outputs a workflow needs to open a pull
 * request (`changed`, `changed-files`, `json`), the step summary; an input of the other command refused, exit 2,
 * nothing sent.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorPerTest, publishFixture } from '../helpers/emulator/index.js';
import { BUNDLE, runAction } from './actionRun.js';
import { PLATFORMS, expectNoTokens, staleLockFiles, staleLockText } from './helpers.js';

const emulator = emulatorPerTest();

/** The inputs of a lock upgrade of `paths` against `e`. */
function lockInputs(e: Emulator, extra: Record<string, string> = {}): Record<string, string> {
  return {
    command: 'lock upgrade',
    paths: 'infra',
    recursive: 'true',
    organization: e.organization,
    hostname: e.url,
    token: e.ownerToken,
    ...extra,
  };
}

describe('the action with command: lock upgrade', () => {
  beforeAll(() => expect(fs.existsSync(BUNDLE)).toBe(true));

  it('moves the lock files under paths; changed, changed-files and json say which; the summary says so', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: PLATFORMS, uploads: ['sums', 'sig', ...PLATFORMS] });
    const seeded = e.requestLog.records.length;
    const run = await runAction(lockInputs(e), { workspace: staleLockFiles(e) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.outputs.changed, run.outputs.json).toBe('true');
    expect(run.outputs['changed-files']!.split('\n')).toEqual([
      'infra/app/.terraform.lock.hcl',
      'infra/db/.terraform.lock.hcl',
    ]);
    expect(JSON.parse(run.outputs.json!)).toMatchObject({ ok: true, dryRun: false });
    for (const folder of ['infra/app', 'infra/db']) {
      const text = fs.readFileSync(path.join(run.workspace, folder, '.terraform.lock.hcl'), 'utf8');
      expect(text).toContain('version     = "1.2.3"');
      expect(text).toContain('version = "3.6.3"');
    }
    // Not under paths: as it was.
    expect(fs.readFileSync(path.join(run.workspace, 'other', '.terraform.lock.hcl'), 'utf8')).toBe(
      staleLockText(e),
    );
    expect(run.summary).toContain('### provider lock upgrade: 2 lock files changed');
    expect(run.summary).toMatch(/ {4}✓ \S+\/example 1\.2\.0 → 1\.2\.3 \(2 lock files; h1: of 5 platforms/);
    expectNoTokens(run.stdout.split('\n').slice(1).join('\n') + run.stderr + run.summary, e, 'the log');
    // It only reads the registry.
    expect(e.requestLog.records.slice(seeded).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('dry-run: changed and changed-files say what would change; nothing written', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: PLATFORMS, uploads: ['sums', 'sig', ...PLATFORMS] });
    const run = await runAction(lockInputs(e, { 'dry-run': 'true', paths: 'infra/app' }), {
      workspace: staleLockFiles(e),
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect([run.outputs.changed, run.outputs['changed-files'], run.outputs['dry-run']]).toEqual([
      'true',
      'infra/app/.terraform.lock.hcl',
      'true',
    ]);
    expect(fs.readFileSync(path.join(run.workspace, 'infra/app/.terraform.lock.hcl'), 'utf8')).toBe(
      staleLockText(e),
    );
  });

  it('an input only publish reads, or an unknown command: exit 2 naming it, nothing sent', async () => {
    const e = await emulator();
    const stray = await runAction(lockInputs(e, { tags: 'team=core' }), { workspace: staleLockFiles(e) });
    expect(stray.exitCode, stray.stderr).toBe(2);
    expect(stray.stderr).toMatch(
      /^::error::Input "tags" is read by command publish, and this step runs lock upgrade/m,
    );
    expect(JSON.parse(stray.outputs.json!)).toMatchObject({ ok: false, error: { code: 'usage' } });
    const unknown = await runAction(lockInputs(e, { command: 'lock check' }));
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(
      /^::error::Input "command" must be publish or lock upgrade, not "lock check"/m,
    );
    const reversed = await runAction({ ...lockInputs(e), command: 'publish', directory: 'dist' });
    expect(reversed.exitCode).toBe(2);
    expect(reversed.stderr).toMatch(/^::error::Input "paths" is read by command lock upgrade/m);
    expect(e.requestLog.records).toEqual([]);
  });
});
