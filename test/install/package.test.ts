/**
 * The npm package as users get it: `npm pack` of a staged copy of the package's files (what `files` names, plus
 * the npm-shrinkwrap.json that prepack writes), installed into an empty folder with production dependencies
 * only: the tree the shrinkwrap pins (what npm installs from the registry), through `npm ci --offline` of a lock
 * made from it, so from npm's cache and without the network (`npm install ./x.tgz` by path would resolve the
 * ranges from the registry instead, see scripts/shrinkwrap.mjs). Then `provider` from that install: --version, verify, lock and a publish against the emulator. The GitLab
 * CI/CD component's job script (templates/publish.yml) runs against the emulator with that same install, as
 * GitLab runs it (./gitlabJob.ts): inputs interpolated, the script lines in one shell, artifacts left in the
 * project folder; what inputs survive GitLab's interpolation: gitlab-component.test.ts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { ensureBuilt } from '../helpers/spawn-cli.js';
import { tempRoot } from '../helpers/tmp.js';
import {
  FAST,
  PLATFORMS,
  RELEASE,
  SIGNER_KEY,
  SIGNER_KEY_FILE,
  expectNoTokens,
  runProcess,
  tamperedRelease,
  userPath,
  writeRequests,
} from './helpers.js';
import { componentJob, componentSpec, runJob } from './gitlabJob.js';

const emulator = emulatorPerTest();
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

let tarball = '';
let entries: string[] = [];
let installDir = '';
let bin = '';

/** The environment npm runs with here: the user's PATH (their npm), nothing inherited from `npm test`. */
function npmEnv(): Record<string, string> {
  return { PATH: userPath(), HOME: process.env.HOME ?? '' };
}

/** Packs a staged copy of the repository's package files (the repository itself is never written). */
function pack(): string {
  const stage = tempRoot('pack-stage');
  for (const item of ['bin', 'dist', 'assets', 'README.md', 'LICENSE', 'package.json', 'package-lock.json']) {
    fs.cpSync(path.join(REPO_ROOT, item), path.join(stage, item), { recursive: true });
  }
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'shrinkwrap.mjs'), 'write', stage]);
  const out = tempRoot('pack-out');
  // --ignore-scripts: prepack (build, shrinkwrap) was done above on the stage, not on the repository.
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', out], {
    cwd: stage,
    stdio: 'pipe',
    env: npmEnv(),
  });
  return path.join(out, `${pkg.name}-${pkg.version}.tgz`);
}

/** Installs the tarball into an empty folder: runtime dependencies only, offline, exactly the shrinkwrap's. */
function install(file: string): string {
  const dir = tempRoot('installed');
  fs.copyFileSync(file, path.join(dir, path.basename(file)));
  execFileSync('tar', ['xzf', path.basename(file), 'package/npm-shrinkwrap.json'], { cwd: dir });
  const shrinkwrap = JSON.parse(fs.readFileSync(path.join(dir, 'package/npm-shrinkwrap.json'), 'utf8')) as {
    packages: Record<string, unknown>;
  };
  fs.rmSync(path.join(dir, 'package'), { recursive: true });
  const spec = `file:${path.basename(file)}`;
  const root = { name: 'empty-folder', private: true, dependencies: { [pkg.name]: spec } };
  const packages: Record<string, unknown> = {
    '': root,
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
    },
  };
  // The package's dependencies land beside it, where the shrinkwrap has them under the package.
  for (const [where, entry] of Object.entries(shrinkwrap.packages)) if (where !== '') packages[where] = entry;
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(root));
  fs.writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ ...root, lockfileVersion: 3, packages }),
  );
  execFileSync('npm', ['ci', '--offline', '--omit=dev', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: 'pipe',
  });
  return dir;
}

beforeAll(() => {
  ensureBuilt();
  tarball = pack();
  entries = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
  installDir = install(tarball);
  bin = path.join(installDir, 'node_modules', '.bin', 'provider');
}, 180_000);

describe('the packed package', () => {
  it('is named provider-registry-cli with the bin provider, built by prepack, pinned by a shrinkwrap', () => {
    expect(pkg.name).toBe('provider-registry-cli');
    expect(pkg.bin).toEqual({ provider: 'bin/provider.cjs' });
    expect(pkg.scripts.prepack).toBe('npm run build && node scripts/shrinkwrap.mjs write');
    expect(pkg.scripts.postpack).toBe('node scripts/shrinkwrap.mjs remove');
    expect(entries).toContain('package/npm-shrinkwrap.json');
  });

  it('holds what runs and nothing else: no sources, tests, fixtures, source maps or dev tooling', () => {
    for (const file of [
      'package/bin/provider.cjs',
      'package/dist/bundle/provider.js',
      'package/dist/help.json',
      'package/assets/tree-sitter-hcl.LICENSE',
      'package/LICENSE',
      'package/README.md',
    ]) {
      expect(entries).toContain(file);
    }
    const strays = entries.filter(
      (e) =>
        /^package\/(src|test|fixtures|bench|scripts|action|templates|node_modules)\//.test(e) ||
        // The program compiled file by file (tsc): the package runs the bundle (dist/bundle/) only, and the
        // shim prints the help texts of dist/help.json.
        (/^package\/dist\//.test(e) &&
          !e.startsWith('package/dist/bundle/') &&
          e !== 'package/dist/help.json') ||
        e.endsWith('.map'),
    );
    expect(strays).toEqual([]);
  });

  it('the shrinkwrap pins the runtime dependencies only', () => {
    const installed = fs.readdirSync(path.join(installDir, 'node_modules'));
    for (const dev of Object.keys(pkg.devDependencies)) {
      expect(
        installed.includes(dev.split('/')[0]!) && fs.existsSync(path.join(installDir, 'node_modules', dev)),
      ).toBe(false);
    }
    for (const dependency of Object.keys(pkg.dependencies)) {
      expect(fs.existsSync(path.join(installDir, 'node_modules', dependency)), dependency).toBe(true);
    }
  });
});

describe('provider from the installed package', () => {
  it('--version prints the package version', async () => {
    const result = await runProcess(bin, ['--version'], { cwd: tempRoot('v'), env: {} });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${pkg.version}\n`);
  });

  it('verify checks the fixture release offline', async () => {
    const result = await runProcess(
      bin,
      ['verify', RELEASE, '--key', SIGNER_KEY_FILE, '--offline', '--json'],
      {
        cwd: tempRoot('verify'),
        env: {},
      },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as { ok: boolean; platforms: { os: string; arch: string }[] };
    expect(doc.ok).toBe(true);
    expect(doc.platforms.map((p) => `${p.os}_${p.arch}`).sort()).toEqual(PLATFORMS);
  });

  it('publishes the fixture release to the emulator, then lock writes the block (the HCL grammar from the bundle)', async () => {
    const e = await emulator();
    const cwd = tempRoot('publish');
    const where = ['--hostname', e.url, '--organization', e.organization];
    const published = await runProcess(bin, ['publish', RELEASE, '--key', SIGNER_KEY_FILE, ...where], {
      cwd,
      env: { TFE_TOKEN: e.ownerToken, ...FAST },
    });
    expect(published.exitCode, published.stderr).toBe(0);
    expect(published.stdout).toContain('example 1.2.3 published: 5 platforms');
    expectNoTokens(published.stdout + published.stderr, e, 'the output');
    expect(e.store.data.platforms.filter((p) => p.binary.uploadedAt !== null)).toHaveLength(5);
    const locked = await runProcess(bin, ['lock', RELEASE, '--key', SIGNER_KEY_FILE, ...where], {
      cwd,
      env: FAST,
    });
    expect(locked.exitCode, locked.stderr).toBe(0);
    const lockFile = fs.readFileSync(path.join(cwd, '.terraform.lock.hcl'), 'utf8');
    expect(lockFile).toContain(`provider "${new URL(e.url).host}/${e.organization}/example" {`);
    expect(lockFile.match(/"h1:/g)).toHaveLength(5);
  });
});

describe('the GitLab CI/CD component (templates/publish.yml)', () => {
  it('declares its inputs with defaults, and artifacts kept on failure with a dotenv report', () => {
    const spec = componentSpec();
    const job = componentJob({});
    expect(job.name).toBe('publish-provider');
    for (const input of ['organization', 'hostname', 'directory', 'package', 'dry-run', 'tags', 'version']) {
      expect(spec[input], input).toHaveProperty('default');
    }
    expect(spec['dry-run']).toMatchObject({ type: 'boolean', default: false });
    expect(spec.tags).toMatchObject({ type: 'array', default: [] });
    expect(spec.package?.default).toBe(`${pkg.name}@latest`);
    expect(job.artifacts.when).toBe('always');
    expect(job.artifacts.paths).toEqual(['provider-publish.json', 'provider.lock.hcl']);
    expect(job.artifacts.reports.dotenv).toBe('provider.env');
    // Secrets are CI/CD variables, never inputs.
    expect(Object.keys(spec).filter((i) => /token|key/.test(i))).toEqual([]);
  });

  it('the job publishes with the installed package: result document, dotenv report, lock block', async () => {
    const e = await emulator();
    const run = await runJob({
      inputs: {
        organization: e.organization,
        hostname: e.url,
        directory: RELEASE,
        tags: ['team=core', 'stage=beta'],
      },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir: path.dirname(bin),
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`${pkg.version}\n`);
    expectNoTokens(run.stdout + run.stderr, e, 'the job log');
    const doc = JSON.parse(fs.readFileSync(path.join(run.project, 'provider-publish.json'), 'utf8')) as {
      ok: boolean;
      tags: { tags: { key: string; value: string }[] };
    };
    expect(doc.ok).toBe(true);
    expect(doc.tags.tags).toEqual([
      { key: 'stage', value: 'beta' },
      { key: 'team', value: 'core' },
    ]);
    const keyId = fs.readFileSync(path.join(REPO_ROOT, 'fixtures/keys/signer.keyid'), 'utf8').trim();
    expect(fs.readFileSync(path.join(run.project, 'provider.env'), 'utf8')).toBe(
      `PROVIDER_VERSION=1.2.3\nPROVIDER_KEY_ID=${keyId}\nPROVIDER_PLATFORMS=${PLATFORMS.join(',')}\n`,
    );
    const lock = fs.readFileSync(path.join(run.project, 'provider.lock.hcl'), 'utf8');
    expect(lock).toContain(`provider "${new URL(e.url).host}/${e.organization}/example" {`);
    expect(e.store.data.platforms.filter((p) => p.binary.uploadedAt !== null)).toHaveLength(5);
  });

  it('a bad release fails the job with exit 3, keeps the result document, writes nothing remotely', async () => {
    const e = await emulator();
    const run = await runJob({
      inputs: { organization: e.organization, hostname: e.url, directory: tamperedRelease(tempRoot('bad')) },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir: path.dirname(bin),
    });
    expect(run.exitCode).toBe(3);
    expect(run.stdout).toContain('provider publish failed with exit code 3');
    const doc = JSON.parse(fs.readFileSync(path.join(run.project, 'provider-publish.json'), 'utf8')) as {
      ok: boolean;
      error: { code: string; message: string };
    };
    expect(doc.ok).toBe(false);
    expect(doc.error.message).toContain('linux_amd64.zip');
    expect(fs.existsSync(path.join(run.project, 'provider.env'))).toBe(false);
    expect(writeRequests(e)).toEqual([]);
  });

  it('dry-run: true writes nothing remotely', async () => {
    const e = await emulator();
    const run = await runJob({
      inputs: { organization: e.organization, hostname: e.url, directory: RELEASE, 'dry-run': true },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir: path.dirname(bin),
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(
      JSON.parse(fs.readFileSync(path.join(run.project, 'provider-publish.json'), 'utf8')),
    ).toMatchObject({
      ok: true,
      dryRun: true,
    });
    expect(writeRequests(e)).toEqual([]);
  });
});
