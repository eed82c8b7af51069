/**
 * The GitLab CI/CD component templates/lock-upgrade.yml: any value of its inputs reaches the script as a job
 * variable under both interpolations GitLab has had (./gitlabJob.ts); the job moves the lock files under its
 * paths to what the emulator's private registry serves and, with merge-request: true, commits them to its branch
 * and pushes it with GitLab's merge request push options (here to a local bare repository that accepts push
 * options, through PROVIDER_GIT_PUSH_URL); an input that is not what it takes fails the job, nothing sent.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorPerTest, publishFixture } from '../helpers/emulator/index.js';
import { ensureBuilt } from '../helpers/spawn-cli.js';
import { tempRoot } from '../helpers/tmp.js';
import { PLATFORMS, expectNoTokens, staleLockFiles, staleLockText } from './helpers.js';
import { PipelineError, componentJob, repositoryProviderDir, runJob } from './gitlabJob.js';

const emulator = emulatorPerTest();
const TEMPLATE = 'lock-upgrade.yml';
let providerDir = '';

beforeAll(() => {
  ensureBuilt();
  providerDir = repositoryProviderDir();
});

/** The text inputs and the variable each becomes. */
const TEXT_INPUTS: Record<string, string> = {
  package: 'PROVIDER_INPUT_PACKAGE',
  to: 'PROVIDER_INPUT_TO',
  'min-age': 'PROVIDER_INPUT_MIN_AGE',
  version: 'PROVIDER_INPUT_VERSION',
  platforms: 'PROVIDER_INPUT_PLATFORMS',
  organization: 'PROVIDER_INPUT_ORGANIZATION',
  hostname: 'PROVIDER_INPUT_HOSTNAME',
};

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  }).trim();

/** A project checked out as a runner does (a commit, a detached HEAD) with lock files, and a bare remote. */
function project(e: Emulator): { prepare: (dir: string) => void; remote: string } {
  const remote = tempRoot('gitlab-remote');
  git(remote, 'init', '--quiet', '--bare', '--initial-branch=main');
  git(remote, 'config', 'receive.advertisePushOptions', 'true');
  return {
    remote,
    prepare: (dir) => {
      staleLockFiles(e)(dir);
      git(dir, 'init', '--quiet', '--initial-branch=main');
      git(
        dir,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@t',
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        'init',
      );
      git(dir, 'add', '.');
      git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'lock files');
      git(dir, 'push', '--quiet', remote, 'HEAD:refs/heads/main');
      git(dir, 'checkout', '--quiet', '--detach');
    },
  };
}

/** The branches of a repository, one per line. */
const branches = (repo: string): string =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads');

/**
 * The job on infra/app of a project whose lock files are older than the fixture an emulator serves, with a bare
 * remote; `inputs` and the variables `env` gives (from the remote) beside the organization, host and token.
 */
async function onFixture(inputs: Record<string, unknown>, env: (remote: string) => Record<string, string>) {
  const e = await emulator();
  await publishFixture(e, { platforms: PLATFORMS, uploads: ['sums', 'sig', ...PLATFORMS] });
  const { prepare, remote } = project(e);
  const run = await runJob({
    template: TEMPLATE,
    inputs: { organization: e.organization, hostname: e.url, paths: ['infra/app'], ...inputs },
    env: { TFE_TOKEN: e.ownerToken, CI_DEFAULT_BRANCH: 'main', ...env(remote) },
    providerDir,
    project: prepare,
  });
  return { e, run, remote };
}

describe('templates/lock-upgrade.yml as GitLab builds its job', () => {
  it.each(['text', 'hash'] as const)(
    '%s interpolation: every one-line text, the lists and the booleans reach their variables as strings',
    (interpolation) => {
      for (const value of [`it's "quoted"`, 'a # not a comment', 'key: value', '--flag=x', 'true', '1.10']) {
        const inputs = Object.fromEntries(Object.keys(TEXT_INPUTS).map((name) => [name, value]));
        const job = componentJob(inputs, interpolation, TEMPLATE);
        const kept = interpolation === 'text' ? value.trimStart() : value;
        for (const [input, variable] of Object.entries(TEXT_INPUTS))
          expect(job.variables[variable], `${input}: ${value}`).toBe(kept);
      }
      const job = componentJob(
        { paths: ['infra', 'a dir, with a comma'], only: ['app.terraform.io/acme/*'], recursive: true },
        interpolation,
        TEMPLATE,
      );
      const list = (variable: string, name: string) =>
        JSON.parse((job.variables[variable] as string).slice(name.length + 1)) as unknown;
      expect(list('PROVIDER_INPUT_PATHS', 'paths')).toEqual(['infra', 'a dir, with a comma']);
      expect(list('PROVIDER_INPUT_ONLY', 'only')).toEqual(['app.terraform.io/acme/*']);
      expect(job.variables.PROVIDER_INPUT_FLAGS).toBe('recursive=true dry-run=false merge-request=false');
    },
  );

  it('a line break in a text input, or a branch that is no branch name, is refused by GitLab itself', () => {
    for (const input of [...Object.keys(TEXT_INPUTS), 'job-name', 'stage', 'image', 'branch'])
      expect(() => componentJob({ [input]: 'x\n    PROVIDER_INPUT_TO: y' }, 'text', TEMPLATE), input).toThrow(
        PipelineError,
      );
    expect(() => componentJob({ branch: 'a b' }, 'text', TEMPLATE)).toThrow(PipelineError);
    expect(() => componentJob({ paths: 'infra' }, 'text', TEMPLATE)).toThrow(
      new PipelineError('`paths` input: provided value is not an array'),
    );
  });
});

describe('the job', () => {
  it('moves the lock files under paths and pushes them to its branch with the merge request push options', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: PLATFORMS, uploads: ['sums', 'sig', ...PLATFORMS] });
    const { prepare, remote } = project(e);
    const seeded = e.requestLog.records.length;
    const run = await runJob({
      template: TEMPLATE,
      inputs: {
        organization: e.organization,
        hostname: e.url,
        paths: ['infra'],
        recursive: true,
        'merge-request': true,
      },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GIT_PUSH_URL: remote, CI_DEFAULT_BRANCH: 'main' },
      providerDir,
      project: prepare,
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expectNoTokens(run.stdout + run.stderr, e, 'the job log');
    expect(fs.readFileSync(path.join(run.project, 'provider-lock.env'), 'utf8')).toBe(
      'PROVIDER_LOCK_CHANGED=true\nPROVIDER_LOCK_COUNT=2\n',
    );
    expect(run.stdout).toContain(
      'Pushed provider/lock-upgrade: its merge request into main is opened or updated',
    );
    // The branch holds one commit on top of main, changing exactly the two lock files, to 1.2.3.
    expect(git(remote, 'log', '--format=%s', 'provider/lock-upgrade')).toBe(
      'chore(deps): update provider lock files\nlock files\ninit',
    );
    expect(git(remote, 'diff', '--name-only', 'main', 'provider/lock-upgrade').split('\n')).toEqual([
      'infra/app/.terraform.lock.hcl',
      'infra/db/.terraform.lock.hcl',
    ]);
    expect(git(remote, 'show', 'provider/lock-upgrade:infra/app/.terraform.lock.hcl')).toContain(
      'version     = "1.2.3"',
    );
    expect(e.requestLog.records.slice(seeded).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('PROVIDER_GIT_TOKEN goes to the project on the GitLab host as an HTTP header, never in the log', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: PLATFORMS, uploads: ['sums', 'sig', ...PLATFORMS] });
    const { prepare } = project(e);
    // The GitLab host: it records what git sends, and refuses the push.
    const seen: { url: string; authorization: string | undefined }[] = [];
    const gitlab = createServer((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(403).end('no');
    });
    await new Promise<void>((resolve) => gitlab.listen(0, '127.0.0.1', resolve));
    const token = 'glpat-secret-token-value';
    try {
      const run = await runJob({
        template: TEMPLATE,
        inputs: {
          organization: e.organization,
          hostname: e.url,
          paths: ['infra/app'],
          'merge-request': true,
        },
        env: {
          TFE_TOKEN: e.ownerToken,
          PROVIDER_GIT_TOKEN: token,
          CI_SERVER_PROTOCOL: 'http',
          CI_SERVER_HOST: '127.0.0.1',
          CI_SERVER_PORT: String((gitlab.address() as AddressInfo).port),
          CI_PROJECT_PATH: 'group/project',
          CI_DEFAULT_BRANCH: 'main',
        },
        providerDir,
        project: prepare,
      });
      expect(run.exitCode).not.toBe(0);
      expect(seen[0]).toEqual({
        url: '/group/project.git/info/refs?service=git-receive-pack',
        authorization: `Basic ${Buffer.from(`oauth2:${token}`).toString('base64')}`,
      });
      expect(run.stdout + run.stderr).not.toContain(token);
      expect(run.stdout + run.stderr).not.toContain(Buffer.from(`oauth2:${token}`).toString('base64'));
    } finally {
      gitlab.closeAllConnections();
      await new Promise((resolve) => gitlab.close(resolve));
    }
  });

  it('the default branch as the branch input: exit 2, nothing pushed', async () => {
    const { run, remote } = await onFixture({ 'merge-request': true, branch: 'main' }, (remote) => ({
      PROVIDER_GIT_PUSH_URL: remote,
    }));
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toContain('error: the branch input is the default branch (main)');
    expect(git(remote, 'log', '--format=%s', 'main')).toBe('lock files\ninit');
  });

  it('merge-request without a token or a push URL: exit 2 saying what to set, nothing pushed', async () => {
    const { run, remote } = await onFixture({ 'merge-request': true }, () => ({}));
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toContain('error: merge-request: true needs PROVIDER_GIT_TOKEN');
    expect(branches(remote)).toBe('main');
  });

  it('dry-run: the diff in the log, nothing written, nothing pushed', async () => {
    const { e, run, remote } = await onFixture({ 'dry-run': true, 'merge-request': true }, (remote) => ({
      PROVIDER_GIT_PUSH_URL: remote,
    }));
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(fs.readFileSync(path.join(run.project, 'infra/app/.terraform.lock.hcl'), 'utf8')).toBe(
      staleLockText(e),
    );
    const doc: unknown = JSON.parse(
      fs.readFileSync(path.join(run.project, 'provider-lock-upgrade.json'), 'utf8'),
    );
    expect(doc).toMatchObject({ ok: true, dryRun: true });
    expect(branches(remote)).toBe('main');
  });

  it('a list item that is not text fails the job with exit 2 before any request', async () => {
    const e = await emulator();
    const run = await runJob({
      template: TEMPLATE,
      inputs: { organization: e.organization, hostname: e.url, paths: [{ dir: 'infra' }] },
      env: { TFE_TOKEN: e.ownerToken },
      providerDir,
    });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toContain('error: the paths input is not a list of texts');
    expect(e.requestLog.records).toEqual([]);
  });
});
