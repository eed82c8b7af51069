/**
 * The GitHub Action as the runner runs it (./actionRun.ts: `node action/main.cjs` with INPUT_ variables,
 * `GITHUB_ACTIONS=true`, `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` files), against an emulator. Also: the
 * committed bundle is what `npm run build:action` builds from the sources now (a stale bundle fails here), and
 * action.yml declares what the bundle reads. Hostile inputs and server answers: action-hardening.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { bundle } from '../../scripts/bundle.mjs';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempRoot } from '../helpers/tmp.js';
import { BUNDLE, publishInputs, runAction } from './actionRun.js';
import {
  PLATFORMS,
  RELEASE,
  SIGNER_KEY,
  SIGNER_KEY_FILE,
  expectNoTokens,
  tamperedRelease,
  writeRequests,
} from './helpers.js';

const emulator = emulatorPerTest();

describe('the committed bundle', () => {
  it('is what npm run build:action builds from the sources now (else: npm run build:action, and commit it)', async () => {
    const fresh = await bundle('action', path.join(tempRoot('bundle'), 'main.cjs'));
    const same = fs.readFileSync(fresh).equals(fs.readFileSync(BUNDLE));
    expect(same, 'action/main.cjs differs from a fresh build: run npm run build:action and commit it').toBe(
      true,
    );
  });

  it("action.yml runs it on node24 and declares every input the bundle reads, with the CLI's defaults", () => {
    const action = parseYaml(fs.readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as {
      inputs: Record<string, { default?: string }>;
      outputs: Record<string, unknown>;
      runs: { using: string; main: string };
    };
    expect(action.runs).toEqual({ using: 'node24', main: 'action/main.cjs' });
    const source = ['action.ts', 'actionInputs.ts', 'actionLock.ts']
      .map((file) => fs.readFileSync(path.join(REPO_ROOT, 'src', 'cli', file), 'utf8'))
      .join('\n');
    const read = new Set(
      [...source.matchAll(/(?:actionInput|booleanInput|listInput)\(env, '([a-z-]+)'/g)].map((m) => m[1]!),
    );
    // The inputs one command refuses for the other are read too.
    for (const list of source.matchAll(/^const (?:PUBLISH|LOCK)_ONLY = \[([^\]]*)\]/gm))
      for (const name of list[1]!.matchAll(/'([a-z-]+)'/g)) read.add(name[1]!);
    for (const flag of source.matchAll(/^ {2}'?([a-z-]+)'?: '--[a-z-]+',$/gm)) read.add(flag[1]!);
    expect([...read].sort()).toEqual(Object.keys(action.inputs).sort());
    expect(action.inputs.directory?.default).toBe('dist');
    expect(Object.keys(action.outputs).sort()).toEqual([
      'changed',
      'changed-files',
      'dry-run',
      'json',
      'key-id',
      'lock-block',
      'platforms',
      'version',
    ]);
  });
});

describe('node action/main.cjs as the runner runs it', () => {
  beforeAll(() => expect(fs.existsSync(BUNDLE)).toBe(true));

  it('publishes the release: outputs, the job summary, the token masked before anything else', async () => {
    const e = await emulator();
    const run = await runAction(
      publishInputs(e, {
        tags: 'team=core\nstage=beta',
        'dry-run': 'false',
      }),
    );
    expect(run.exitCode, run.stderr).toBe(0);
    // The runner masks a value from the moment it reads ::add-mask::, so it comes first, and only there.
    const [first, ...rest] = run.stdout.split('\n');
    expect(first).toBe(`::add-mask::${e.ownerToken}`);
    expectNoTokens(rest.join('\n') + run.stderr + run.summary, e, 'the log or the summary');
    expectNoTokens(JSON.stringify(run.outputs), e, 'the outputs');

    expect(run.outputs.version).toBe('1.2.3');
    expect(run.outputs['key-id']).toBe(
      fs.readFileSync(path.join(REPO_ROOT, 'fixtures/keys/signer.keyid'), 'utf8').trim(),
    );
    expect(run.outputs['dry-run']).toBe('false');
    const platforms = JSON.parse(run.outputs.platforms!) as { os: string; arch: string; hashes: string[] }[];
    expect(platforms.map((p) => `${p.os}_${p.arch}`).sort()).toEqual(PLATFORMS);
    for (const p of platforms) expect(p.hashes.map((h) => h.slice(0, 3)).sort()).toEqual(['h1:', 'zh:']);
    expect(JSON.parse(run.outputs.json!)).toMatchObject({ ok: true, check: { status: 'passed' } });

    // The lock-block output is the block `provider lock` writes for the same release and host.
    const lockDir = tempRoot('lock');
    const lock = await runCli(
      ['lock', RELEASE, '--key', SIGNER_KEY_FILE, '--hostname', e.url, '--organization', e.organization],
      { cwd: lockDir, env: {} },
    );
    expect(lock.exitCode, lock.stderr).toBe(0);
    const lockFile = fs.readFileSync(path.join(lockDir, '.terraform.lock.hcl'), 'utf8');
    expect(lockFile.endsWith(`\n${run.outputs['lock-block']}\n`)).toBe(true);
    expect(run.stdout).toContain(run.outputs['lock-block']);

    // The CLI's own job summary, and the version really published with its tags.
    expect(run.summary).toContain('### provider publish: example 1.2.3');
    for (const p of PLATFORMS) expect(run.summary).toContain(`| ${p} |`);
    expect(run.summary).toContain('team=core');
    const version = e.store.data.versions.find((v) => v.version === '1.2.3');
    expect(version).toBeDefined();
    expect(e.store.data.platforms.filter((p) => p.binary.uploadedAt !== null)).toHaveLength(5);
  });

  it('dry-run: the plan as outputs, nothing written', async () => {
    const e = await emulator();
    const run = await runAction(
      publishInputs(e, {
        'dry-run': 'true',
      }),
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.outputs['dry-run']).toBe('true');
    expect(run.outputs.version).toBe('1.2.3');
    expect(run.stdout).toContain('would publish');
    expect(writeRequests(e)).toEqual([]);
  });

  it('a release whose zip does not match SHA256SUMS: exit 3, an ::error:: annotation, no output, nothing written', async () => {
    const e = await emulator();
    const run = await runAction(publishInputs(e, { directory: tamperedRelease(tempRoot('bad')) }));
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/^::error::.*linux_amd64\.zip/m);
    // Only the result document, for steps that run on failure.
    expect(Object.keys(run.outputs)).toEqual(['json']);
    expect(JSON.parse(run.outputs.json!)).toMatchObject({ ok: false, error: { code: 'verification' } });
    expect(writeRequests(e)).toEqual([]);
    expectNoTokens(run.stdout.split('\n').slice(1).join('\n') + run.stderr, e, 'the log');
  });

  it("the token input wins over a TF_TOKEN_<host> in the step's environment", async () => {
    const e = await emulator();
    // Terraform's encoding of the hostname: `.` → `_`, `-` → `__`.
    const host = new URL(e.url).hostname.replaceAll('-', '__').replaceAll('.', '_');
    const run = await runAction(
      publishInputs(e),
      // A member token (may not create providers) set for terraform init, say.
      { env: { [`TF_TOKEN_${host}`]: e.memberToken } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(e.store.data.providers).toHaveLength(1);
  });

  it('no token anywhere: exit 2 naming what to set, nothing sent', async () => {
    const e = await emulator();
    const run = await runAction({
      directory: RELEASE,
      organization: e.organization,
      hostname: e.url,
      'gpg-public-key': SIGNER_KEY,
    });
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stdout).not.toContain('::add-mask::');
    expect(run.stderr).toMatch(/^::error::No API token was found for 127\.0\.0\.1:\d+/m);
    expect(run.stderr).toContain('TFE_TOKEN');
    expect(e.requestLog.records).toEqual([]);
  });

  it('a boolean input that is not true or false: exit 2 before anything runs', async () => {
    const e = await emulator();
    const run = await runAction({
      directory: RELEASE,
      organization: e.organization,
      hostname: e.url,
      token: e.ownerToken,
      'dry-run': 'yes',
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('::error::Input "dry-run" must be true or false, not "yes"');
    expect(e.requestLog.records).toEqual([]);
  });
});
