/**
 * The npm package as users get it: `npm pack` of a staged copy of the package's files (what `files` names), with
 * the repository's own prepack step that strips package.json (scripts/pack-manifest.mjs), installed globally
 * into an empty prefix, offline: the package has no dependencies (the program is bundled, docs/node.md), so
 * nothing else is fetched. Then `provider` from that install: --version, verify, lock and a publish against the
 * emulator. The GitLab CI/CD component's job script (templates/publish.yml) runs against the emulator with that
 * same install, as GitLab runs it (./gitlabJob.ts): inputs interpolated, the script lines in one shell, artifacts
 * left in the project folder; what inputs survive GitLab's interpolation: gitlab-component.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
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
type Manifest = {
  name: string;
  version: string;
  bin: Record<string, string>;
  files: string[];
  engines: { node: string };
  dependencies?: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;

let tarball = '';
let entries: string[] = [];
/** The tarball's package.json. */
let packed: Partial<Manifest> & Record<string, unknown> = {};
/** What `npm pack --dry-run --json` says the package holds. */
let dryRun: { files: { path: string }[]; bundled: string[] } = { files: [], bundled: [] };
/** What `npm install -g` of the tarball printed. */
let installOutput = '';
let prefix = '';
let bin = '';

/** The environment npm runs with here: the user's PATH (their npm), nothing inherited from `npm test`. */
function npmEnv(): Record<string, string> {
  return { PATH: userPath(), HOME: process.env.HOME ?? '' };
}

/**
 * Packs a staged copy of the repository's package files (the repository itself is never written) with npm's own
 * prepack and postpack: the repository's, less the build (done already: dist/ is copied).
 */
function pack(): string {
  const stage = tempRoot('pack-stage');
  for (const item of ['bin', 'dist', 'README.md', 'LICENSE', 'package.json']) {
    fs.cpSync(path.join(REPO_ROOT, item), path.join(stage, item), { recursive: true });
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(stage, 'package.json'), 'utf8')) as Manifest;
  const script = path.join(REPO_ROOT, 'scripts', 'pack-manifest.mjs');
  manifest.scripts = {
    prepack: pkg.scripts.prepack!.replace(
      'npm run build && node scripts/pack-manifest.mjs',
      `node ${script}`,
    ),
    postpack: pkg.scripts.postpack!.replace('node scripts/pack-manifest.mjs', `node ${script}`),
  };
  const before = `${JSON.stringify(manifest, null, 2)}\n`;
  fs.writeFileSync(path.join(stage, 'package.json'), before);
  const out = tempRoot('pack-out');
  const listed = execFileSync('npm', ['pack', '--dry-run', '--json'], {
    cwd: stage,
    encoding: 'utf8',
    env: npmEnv(),
  });
  dryRun = (JSON.parse(listed) as (typeof dryRun)[])[0]!;
  execFileSync('npm', ['pack', '--pack-destination', out], { cwd: stage, stdio: 'pipe', env: npmEnv() });
  // postpack put the repository's package.json back.
  expect(fs.readFileSync(path.join(stage, 'package.json'), 'utf8')).toBe(before);
  expect(fs.existsSync(path.join(stage, '.package.json.unpacked'))).toBe(false);
  return path.join(out, `${pkg.name}-${pkg.version}.tgz`);
}

/** `npm install -g` of the tarball into an empty prefix, offline, as strict about engines as npm can be. */
function install(file: string): string {
  const dir = tempRoot('global');
  const result = spawnSync(
    'npm',
    ['install', '--global', '--prefix', dir, '--offline', '--engine-strict', '--no-audit', '--no-fund', file],
    { cwd: dir, encoding: 'utf8', env: npmEnv() },
  );
  installOutput = `${result.stdout}${result.stderr}`;
  expect(result.status, installOutput).toBe(0);
  return dir;
}

beforeAll(() => {
  ensureBuilt();
  tarball = pack();
  entries = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
  packed = JSON.parse(
    execFileSync('tar', ['xzfO', tarball, 'package/package.json'], { encoding: 'utf8' }),
  ) as typeof packed;
  prefix = install(tarball);
  bin = path.join(prefix, 'bin', 'provider');
}, 180_000);

describe('the packed package', () => {
  it('is named provider-registry-cli with the bin provider, built by prepack, its package.json stripped', () => {
    expect(pkg.name).toBe('provider-registry-cli');
    expect(pkg.bin).toEqual({ provider: 'bin/provider.cjs' });
    expect(pkg.scripts.prepack).toBe('npm run build && node scripts/pack-manifest.mjs strip');
    expect(pkg.scripts.postpack).toBe('node scripts/pack-manifest.mjs restore');
    // No development script ships (a packed `prepare` makes npm warn about an install script), nor anything
    // else about this repository's own install.
    for (const field of ['scripts', 'devDependencies', 'allowScripts', 'overrides']) {
      expect(packed, field).not.toHaveProperty(field);
    }
    expect(packed.engines).toEqual(pkg.engines);
    expect(packed.bin).toEqual(pkg.bin);
    expect(installOutput).not.toMatch(/install script|allowScripts|EBADENGINE|deprecated/i);
  });

  it('holds what runs and nothing else: no sources, tests, fixtures, source maps or dev tooling', () => {
    for (const file of [
      'package/bin/provider.cjs',
      'package/dist/bundle/provider.js',
      'package/dist/bundle/licenses.json',
      'package/LICENSE',
      'package/README.md',
    ]) {
      expect(entries).toContain(file);
    }
    const strays = entries.filter(
      (e) =>
        /^package\/(src|test|fixtures|bench|scripts|action|templates|assets|node_modules)\//.test(e) ||
        // The program compiled file by file (tsc): the package runs the bundle (dist/bundle/) only.
        (/^package\/dist\//.test(e) && !e.startsWith('package/dist/bundle/')) ||
        e.endsWith('.map'),
    );
    expect(strays).toEqual([]);
    expect(dryRun.files.map((f) => `package/${f.path}`).sort()).toEqual(
      [...entries].filter((e) => !e.endsWith('/')).sort(),
    );
  });

  it('holds no package twice: every library once, in the bundle, and nothing for npm to install again', () => {
    // Nothing to install beside the bundle: no dependencies of any kind, nothing bundled by npm.
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies']) {
      expect(packed, field).not.toHaveProperty(field);
    }
    expect(dryRun.bundled).toEqual([]);
    expect(fs.existsSync(path.join(prefix, 'lib', 'node_modules', pkg.name, 'node_modules'))).toBe(false);
    expect(fs.readdirSync(path.join(prefix, 'lib', 'node_modules'))).toEqual([pkg.name]);
    // Each library in the bundle once per version, with its licence.
    const licenses = JSON.parse(
      execFileSync('tar', ['xzfO', tarball, 'package/dist/bundle/licenses.json'], { encoding: 'utf8' }),
    ) as { packages: { name: string; version: string; license: string | null; text: string | null }[] };
    const ids = licenses.packages.map((p) => `${p.name}@${p.version}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const library of [
      'commander',
      'got',
      'openpgp',
      'zod',
      'pg',
      '@tree-sitter-grammars/tree-sitter-hcl',
    ]) {
      expect(
        licenses.packages.some((p) => p.name === library),
        library,
      ).toBe(true);
    }
    for (const p of licenses.packages) expect(p.license ?? p.text, p.name).toBeTruthy();
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
