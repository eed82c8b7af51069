// The GitHub Actions workflows cannot run here: this parses them (the `yaml` package) and checks the facts the
// release depends on (docs/releasing.md): CI runs .ci/run, the release runs semantic-release after CI with the
// permissions it needs, moves the major tag, and the binaries cover the five platforms.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { releaseConfig } from '../../release.config.mjs';
import { REPO_ROOT } from '../helpers/paths.js';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
}

interface Job {
  name?: string;
  uses?: string;
  needs?: string | string[];
  if?: string;
  'runs-on'?: string;
  permissions?: Record<string, string>;
  outputs?: Record<string, string>;
  strategy?: { 'fail-fast'?: boolean; matrix: { include: { target: string; runner: string }[] } };
  env?: Record<string, string>;
  steps?: Step[];
}

interface Workflow {
  name: string;
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
}

function workflow(file: string): Workflow {
  return parse(readFileSync(path.join(REPO_ROOT, '.github/workflows', file), 'utf8')) as Workflow;
}

const ci = workflow('ci.yml');
const release = workflow('release.yml');
const allSteps = [...Object.values(ci.jobs), ...Object.values(release.jobs)].flatMap(
  (job) => job.steps ?? [],
);

describe('.github/workflows/ci.yml', () => {
  it('runs .ci/run on ubuntu-latest (which brings Node 22, 24 and 26 itself), for pull requests and when the release calls it', () => {
    expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'workflow_call', 'workflow_dispatch']);
    const job = ci.jobs.ci!;
    expect(job['runs-on']).toBe('ubuntu-latest');
    expect(job.steps!.map((step) => step.uses ?? step.run)).toEqual([
      'actions/checkout@v5',
      'actions/setup-node@v5',
      'bash .ci/run',
    ]);
    expect(job.steps![1]!.with).toEqual({ 'node-version': 24 });
    expect((job as { strategy?: unknown }).strategy).toBeUndefined();
    expect(ci.permissions).toEqual({ contents: 'read' });
  });
});

describe('.github/workflows/release.yml', () => {
  const job = release.jobs.release!;
  const steps = job.steps!;

  it('runs on a push to main, after CI (the ci job calls ci.yml)', () => {
    expect(release.on).toEqual({ push: { branches: ['main'] } });
    expect(release.jobs.ci).toEqual({ uses: './.github/workflows/ci.yml' });
    expect(job.needs).toBe('ci');
    expect(release.permissions).toEqual({ contents: 'read' });
  });

  it('the release job has the permissions semantic-release and npm trusted publishing (OIDC) need', () => {
    expect(job['runs-on']).toBe('ubuntu-latest');
    expect(job.permissions).toEqual({
      contents: 'write',
      issues: 'write',
      'pull-requests': 'write',
      'id-token': 'write',
    });
  });

  it('checks out the whole history, sets up Node 24 (no .npmrc), installs from the lock file, checks signatures', () => {
    expect(steps[0]).toEqual({ uses: 'actions/checkout@v5', with: { 'fetch-depth': 0 } });
    // No registry-url: setup-node would write an .npmrc whose token is a placeholder.
    expect(steps[1]).toEqual({ uses: 'actions/setup-node@v5', with: { 'node-version': 24 } });
    expect(steps[2]).toEqual({ run: 'npm ci' });
    expect(steps[3]!.run).toBe('npm audit signatures');
  });

  it('runs semantic-release with the GitHub token only: npm publishes by trusted publishing, no npm token anywhere', () => {
    const step = steps.find((s) => s.run === 'npx semantic-release');
    expect(step).toBeDefined();
    expect(step!.env).toEqual({ GITHUB_TOKEN: '${{ secrets.GITHUB_TOKEN }}' });
    // Not in any job (comments aside): a token there would be used if OIDC failed, hiding the failure.
    expect(JSON.stringify(release)).not.toMatch(/NPM_TOKEN|NODE_AUTH_TOKEN|registry-url/);
  });

  it('then moves the major tag to the release commit, only when there was a release', () => {
    const index = steps.findIndex((s) => s.run === 'npx semantic-release');
    const released = steps.find((s) => s.run?.includes('git tag --points-at HEAD'));
    const move = steps.find((s) => s.run?.includes('git push --force origin'));
    expect(released && move).toBeTruthy();
    expect(steps.indexOf(released!)).toBeGreaterThan(index);
    expect(steps.indexOf(move!)).toBeGreaterThan(steps.indexOf(released!));
    expect(move!.if).toBe("steps.released.outputs.tag != ''");
    expect(move!.run).toContain('major="${TAG%%.*}"');
    expect(move!.run).toContain('git tag --force "$major"');
    expect(job.outputs).toEqual({ tag: '${{ steps.released.outputs.tag }}' });
  });

  it('the binaries cover the five platforms: linux-x64 from the release job, the other four from a matrix', () => {
    // The release job runs on linux x64 and attaches build/provider-linux-x64 (release.config.mjs).
    const config = releaseConfig({});
    const github = config.plugins.find(([name]) => name === '@semantic-release/github')![1];
    expect((github.assets as { path: string }[]).map((asset) => asset.path)).toContain(
      'build/provider-linux-x64',
    );

    const binaries = release.jobs.binaries!;
    expect(binaries.needs).toBe('release');
    expect(binaries.if).toBe("needs.release.outputs.tag != ''");
    expect(binaries.permissions).toEqual({ contents: 'write' });
    expect(binaries.strategy!['fail-fast']).toBe(false);
    const matrix = binaries.strategy!.matrix.include;
    expect(['linux-x64', ...matrix.map((entry) => entry.target)].sort()).toEqual(
      ['linux-x64', 'linux-arm64', 'macos-arm64', 'macos-x64', 'windows-x64'].sort(),
    );
    // GitHub-hosted runners of each platform's own OS and architecture.
    expect(Object.fromEntries(matrix.map((entry) => [entry.target, entry.runner]))).toEqual({
      'linux-arm64': 'ubuntu-24.04-arm',
      'macos-arm64': 'macos-15',
      'macos-x64': 'macos-15-intel',
      'windows-x64': 'windows-latest',
    });
    expect(binaries['runs-on']).toBe('${{ matrix.runner }}');
  });

  it('each binary is built from the release tag, checked against its version, and uploaded to the release', () => {
    const steps = release.jobs.binaries!.steps!;
    expect(steps[0]).toEqual({
      uses: 'actions/checkout@v5',
      with: { ref: '${{ needs.release.outputs.tag }}' },
    });
    expect(steps[1]).toEqual({ uses: 'actions/setup-node@v5', with: { 'node-version': 24 } });
    const runs = steps.map((s) => s.run ?? s.uses);
    expect(runs).toContain('npm run build:binary');
    expect(runs.findIndex((r) => r?.includes('--version'))).toBeGreaterThan(
      runs.indexOf('npm run build:binary'),
    );
    expect(runs.at(-1)).toBe('gh release upload "$TAG" "$BINARY" --clobber');
    expect(release.jobs.binaries!.env).toEqual({
      TAG: '${{ needs.release.outputs.tag }}',
      GH_TOKEN: '${{ secrets.GITHUB_TOKEN }}',
    });
  });
});

describe('the workflows', () => {
  it('use only actions whose current major versions run on Node 24 (GitHub removed Node 20 from the runners)', () => {
    const used = new Set(allSteps.flatMap((step) => (step.uses ? [step.uses] : [])));
    expect([...used].sort()).toEqual(['actions/checkout@v5', 'actions/setup-node@v5']);
  });
});
