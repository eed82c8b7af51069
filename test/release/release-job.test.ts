// The release job (release.config.mjs, docs/releasing.md), exercised offline as far as it goes: semantic-release
// itself, from the project's node_modules, runs the offline configuration (RELEASE_DRY_OFFLINE=1) against a local
// bare repository: as the dry run it is, checking the version it decides, the notes it writes, and that it pushes
// nothing; then with --no-dry-run and the builds stubbed, checking the release commit and tag it pushes there. The
// configuration's other facts (the same plugins as the real release minus the network ones, every plugin
// installed and running on the Node versions docs/releasing.md names) and the release build check
// (scripts/check-release-build.mjs) too.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';
import semver from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';
import { NETWORK_PLUGINS, OFFLINE_SWITCH, TARBALL_DIR, releaseConfig } from '../../release.config.mjs';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';

const SEMANTIC_RELEASE = path.join(REPO_ROOT, 'node_modules/semantic-release/bin/semantic-release.js');
/**
 * The lowest Node 22 and Node 24 the release tooling runs on (docs/releasing.md, "What it needs"): the engines of
 * semantic-release 25 and its plugins, the package's own floor on Node 22, so that `npm ci` works there. The release job runs the newest Node 24; developers run the dry run on 22 or
 * 24. A plugin update that needs more fails here, before a release job meets it.
 */
const RELEASE_NODES = ['22.14.0', '24.10.0'];

/**
 * A minimal environment: no CI variables (env-ci would take the branch from a CI's, e.g. a pull request's, and
 * semantic-release would then decline to release), no npm_config_* from `npm test`, no user or system git
 * configuration; a git identity for the commits.
 */
function cleanEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Release Test',
    GIT_AUTHOR_EMAIL: 'release-test@example.com',
    GIT_COMMITTER_NAME: 'Release Test',
    GIT_COMMITTER_EMAIL: 'release-test@example.com',
    ...extra,
  };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 50_000 });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function git(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): string {
  const result = run('git', args, cwd, env);
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** A release repository in a temporary folder, its bare remote, and the environment the commands run in. */
interface Fixture {
  bare: string;
  repo: string;
  env: NodeJS.ProcessEnv;
  /** The commit the remote's main had before semantic-release ran. */
  pushedMain: string;
}

/**
 * A repository with the project's package.json (through `adapt`) and release.config.mjs, the project's
 * node_modules linked (not installed: semantic-release loads the configuration and the plugins from here as it
 * does in the project), `extra` files, a tag v1.0.0, then a feat, a fix and a docs commit on main, all pushed to
 * a local bare repository as origin.
 */
function releaseFixture(
  label: string,
  adapt: (pkg: Record<string, unknown>) => Record<string, unknown> = (pkg) => pkg,
  extra: Record<string, string> = {},
): Fixture {
  const root = tempDir(label);
  const home = path.join(root, 'home');
  const bare = path.join(root, 'remote.git');
  const repo = path.join(root, 'repo');
  mkdirSync(home);
  mkdirSync(repo);
  const env = cleanEnv(home);
  git(root, env, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  git(repo, env, 'init', '--quiet', '--initial-branch=main');

  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  writeFileSync(path.join(repo, 'package.json'), `${JSON.stringify(adapt(pkg), null, 2)}\n`);
  copyFileSync(path.join(REPO_ROOT, 'release.config.mjs'), path.join(repo, 'release.config.mjs'));
  for (const [file, text] of Object.entries(extra)) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  }
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(repo, 'node_modules'), 'dir');
  writeFileSync(path.join(repo, '.git/info/exclude'), 'node_modules\nbuild/\n');

  git(repo, env, 'add', '.');
  git(repo, env, 'commit', '--quiet', '-m', 'chore: the project as released in 1.0.0');
  git(repo, env, 'tag', 'v1.0.0');
  const commit = (file: string, message: string) => {
    writeFileSync(path.join(repo, file), `${message}\n`);
    git(repo, env, 'add', file);
    git(repo, env, 'commit', '--quiet', '-m', message);
  };
  commit('feature.txt', 'feat: versions list shows each version tag');
  commit('fix.txt', 'fix: the lock block keeps the platforms in order');
  commit('docs.txt', 'docs: how a release happens');
  git(repo, env, 'remote', 'add', 'origin', `file://${bare}`);
  git(repo, env, 'push', '--quiet', 'origin', 'main', '--tags');
  return { bare, repo, env, pushedMain: git(bare, env, 'rev-parse', 'refs/heads/main') };
}

/** semantic-release from the project's node_modules, offline (RELEASE_DRY_OFFLINE=1), against the bare remote. */
function semanticRelease(fixture: Fixture, ...args: string[]) {
  return run(
    process.execPath,
    [
      SEMANTIC_RELEASE,
      ...args,
      '--no-ci',
      '--branches',
      'main',
      '--repository-url',
      `file://${fixture.bare}`,
    ],
    fixture.repo,
    { ...fixture.env, [OFFLINE_SWITCH]: '1' },
  );
}

describe('the release job, offline: a semantic-release dry run against a local bare remote', () => {
  let fixture: Fixture;
  let result: { status: number | null; stdout: string; stderr: string };

  beforeAll(() => {
    fixture = releaseFixture('dry-run');
    result = semanticRelease(fixture, '--dry-run');
  }, 60_000);

  it('exits 0, having loaded the offline plugins only (no @semantic-release/github)', () => {
    expect(result.status, result.stdout + result.stderr).toBe(0);
    const loaded = new Set(
      [...result.stdout.matchAll(/Loaded plugin "\w+" from "([^"]+)"/g)].map((m) => m[1]),
    );
    expect([...loaded].sort()).toEqual(
      [
        '@semantic-release/changelog',
        '@semantic-release/commit-analyzer',
        '@semantic-release/exec',
        '@semantic-release/git',
        '@semantic-release/npm',
        '@semantic-release/release-notes-generator',
      ].sort(),
    );
    expect(result.stdout + result.stderr).toContain('in dry-run mode');
  });

  it('decides 1.1.0 from the feat commit since v1.0.0', () => {
    expect(result.stdout).toContain('Found git tag v1.0.0 associated with version 1.0.0 on branch main');
    expect(result.stdout).toContain('Found 3 commits since last release');
    expect(result.stdout).toContain('Analysis of 3 commits complete: minor release');
    expect(result.stdout).toContain('The next release version is 1.1.0');
  });

  it('writes release notes with the feat under Features and the fix under Bug Fixes (the docs commit left out, as the conventionalcommits preset does)', () => {
    const [, notes = ''] = result.stdout.split('Release note for version 1.1.0:');
    expect(notes).toMatch(/## 1\.1\.0/);
    const features = notes.indexOf('### Features');
    const feat = notes.indexOf('versions list shows each version tag');
    const fixes = notes.indexOf('### Bug Fixes');
    const fix = notes.indexOf('the lock block keeps the platforms in order');
    expect(
      [features, feat, fixes, fix].every((i) => i >= 0),
      notes,
    ).toBe(true);
    expect(features < feat && feat < fixes && fixes < fix, notes).toBe(true);
    expect(notes).not.toContain('how a release happens');
  });

  it('skips every prepare and publish step and the tag, and pushes nothing: the bare remote is as it was', () => {
    const output = result.stdout + result.stderr;
    for (const plugin of ['changelog', 'npm', 'exec', 'git']) {
      expect(output).toContain(`Skip step "prepare" of plugin "@semantic-release/${plugin}" in dry-run mode`);
    }
    expect(output).toContain('Skip v1.1.0 tag creation in dry-run mode');
    const { bare, env, pushedMain } = fixture;
    expect(git(bare, env, 'tag', '--list')).toBe('v1.0.0');
    expect(git(bare, env, 'rev-parse', 'refs/heads/main')).toBe(pushedMain);
    expect(git(bare, env, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main\nrefs/tags/v1.0.0');
  });
});

describe('the release job, offline, past the dry run: prepare and the tag, with the builds stubbed', () => {
  // `--no-dry-run` overrides the offline configuration's dryRun: semantic-release then runs every step that needs
  // no network: the changelog, npm's version and pack (publishing off), the exec builds and the release build
  // check, the git commit, the tag, and the pushes, all to the local bare remote. The builds are stand-ins that
  // write what `npm run build:action` and `npm run build:binary` write, from the version package.json says when
  // they run: so the release commit shows whether they ran after npm set the version. npm pack's own build
  // (prepack) is a no-op here, as the project's sources are not in the repository.
  const STUB = [
    "import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';",
    "const { version } = JSON.parse(readFileSync('package.json', 'utf8'));",
    "if (process.argv[2] === 'action') {",
    "  mkdirSync('action', { recursive: true });",
    "  writeFileSync('action/main.cjs', `// stand-in bundle built for ${version}\\n`);",
    '} else {',
    "  mkdirSync('build', { recursive: true });",
    '  const file = `build/provider-${process.platform}-${process.arch}`;',
    '  writeFileSync(file, `#!/bin/sh\\necho ${version}\\n`);',
    '  chmodSync(file, 0o755);',
    '}',
    '',
  ].join('\n');
  const { name } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string };
  let fixture: Fixture;
  let result: { status: number | null; stdout: string; stderr: string };

  beforeAll(() => {
    fixture = releaseFixture(
      'prepare',
      (pkg) => ({
        ...pkg,
        scripts: {
          prepack: 'node -e ""',
          'build:action': 'node stub-build.mjs action',
          'build:binary': 'node stub-build.mjs binary',
        },
      }),
      {
        'stub-build.mjs': STUB,
        'package-lock.json': `${JSON.stringify(
          {
            name,
            version: '0.0.0-development',
            lockfileVersion: 3,
            requires: true,
            packages: { '': { name } },
          },
          null,
          2,
        )}\n`,
        'scripts/check-release-build.mjs': readFileSync(
          path.join(REPO_ROOT, 'scripts/check-release-build.mjs'),
          'utf8',
        ),
      },
    );
    result = semanticRelease(fixture, '--no-dry-run');
  }, 60_000);

  it('exits 0; npm packs but does not publish; the release build check passes', () => {
    const output = result.stdout + result.stderr;
    expect(result.status, output).toBe(0);
    expect(output).toContain('Skip publishing to npm registry as npmPublish is false');
    expect(output).toContain(`check-release-build: package.json, action/main.cjs and build/provider-`);
    expect(existsSync(path.join(fixture.repo, TARBALL_DIR, `${name}-1.1.0.tgz`))).toBe(true);
  });

  it('pushes the release commit with CHANGELOG.md, package.json, package-lock.json and the bundle, tagged v1.1.0', () => {
    const { bare, env } = fixture;
    expect(git(bare, env, 'tag', '--list')).toBe('v1.0.0\nv1.1.0');
    expect(git(bare, env, 'rev-parse', 'refs/heads/main')).toBe(
      git(bare, env, 'rev-parse', 'v1.1.0^{commit}'),
    );
    expect(git(bare, env, 'log', '-1', '--format=%s', 'v1.1.0')).toBe('chore(release): 1.1.0 [skip ci]');
    expect(git(bare, env, 'rev-parse', 'v1.1.0^')).toBe(fixture.pushedMain);
    expect(git(bare, env, 'show', '--name-only', '--format=', 'v1.1.0').split('\n').sort()).toEqual([
      'CHANGELOG.md',
      'action/main.cjs',
      'package-lock.json',
      'package.json',
    ]);
  });

  it('the committed bundle and the binary were built after npm set the version', () => {
    const { bare, env } = fixture;
    const pkg = JSON.parse(git(bare, env, 'show', 'v1.1.0:package.json')) as { version: string };
    const lock = JSON.parse(git(bare, env, 'show', 'v1.1.0:package-lock.json')) as { version: string };
    expect([pkg.version, lock.version]).toEqual(['1.1.0', '1.1.0']);
    expect(git(bare, env, 'show', 'v1.1.0:action/main.cjs')).toBe('// stand-in bundle built for 1.1.0');
    const changelog = git(bare, env, 'show', 'v1.1.0:CHANGELOG.md');
    expect(changelog).toMatch(/^## \[1\.1\.0\]\(/);
    expect(changelog).toContain('versions list shows each version tag');
    expect(changelog).toContain('the lock block keeps the platforms in order');
  });
});

describe('release.config.mjs', () => {
  const real = releaseConfig({});
  const offline = releaseConfig({ [OFFLINE_SWITCH]: '1' });
  const names = (config: typeof real) => config.plugins.map(([name]) => name);

  it('releases from main with v-prefixed tags (the Action is used as @v1)', () => {
    expect(real.branches).toEqual(['main']);
    expect(real.tagFormat).toBe('v${version}');
    expect('dryRun' in real).toBe(false);
  });

  it('the offline configuration is the real one minus the network plugins, in the same order, always a dry run', () => {
    expect(NETWORK_PLUGINS).toEqual(['@semantic-release/github']);
    expect(names(real)).toEqual(expect.arrayContaining(NETWORK_PLUGINS));
    expect(names(offline)).toEqual(names(real).filter((name) => !NETWORK_PLUGINS.includes(name)));
    expect(offline).toMatchObject({ branches: real.branches, tagFormat: real.tagFormat, dryRun: true });
    // The same options, but npm does not publish.
    for (const [name, options] of offline.plugins) {
      const realOptions = real.plugins.find(([n]) => n === name)![1];
      if (name === '@semantic-release/npm') {
        expect(realOptions).toEqual({ npmPublish: true, tarballDir: TARBALL_DIR });
        expect(options).toEqual({ ...realOptions, npmPublish: false });
      } else {
        expect(options, name).toEqual(realOptions);
      }
    }
  });

  it('runs the plugins in the order that gives the builds the new version', () => {
    // npm's prepare writes the version to package.json (and packs); exec builds the action bundle and the binary
    // from it; git commits them; github attaches them.
    expect(names(real)).toEqual([
      '@semantic-release/commit-analyzer',
      '@semantic-release/release-notes-generator',
      '@semantic-release/changelog',
      '@semantic-release/npm',
      '@semantic-release/exec',
      '@semantic-release/git',
      '@semantic-release/github',
    ]);
    const options = Object.fromEntries(real.plugins);
    expect(options['@semantic-release/exec']!.prepareCmd).toBe(
      'npm run build:action && npm run build:binary && node scripts/check-release-build.mjs ${nextRelease.version}',
    );
    expect(options['@semantic-release/git']).toEqual({
      assets: ['CHANGELOG.md', 'package.json', 'package-lock.json', 'action/main.cjs'],
      message: 'chore(release): ${nextRelease.version} [skip ci]',
    });
    const assets = options['@semantic-release/github']!.assets as { path: string }[];
    expect(assets.map((asset) => asset.path)).toEqual([
      `${TARBALL_DIR}/*.tgz`,
      'build/provider-linux-x64',
      'action/main.cjs',
    ]);
  });

  it(`names only plugins that are installed (devDependencies, or shipped with semantic-release) and run on Node ${RELEASE_NODES.join(' and ')}`, () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const bundled = readPackage('semantic-release').dependencies ?? {};
    const required = [...names(real), 'semantic-release', 'conventional-changelog-conventionalcommits'];
    for (const name of required) {
      expect(name in pkg.devDependencies || name in bundled, `${name} is not a devDependency`).toBe(true);
      const installed = readPackage(name);
      for (const node of RELEASE_NODES) {
        expect(
          semver.satisfies(node, installed.engines?.node ?? '*'),
          `${name}@${installed.version} on Node ${node}`,
        ).toBe(true);
      }
    }
  });

  it(`every package the release installs (semantic-release, its plugins and their dependencies) allows Node ${RELEASE_NODES.join(' and ')}`, () => {
    const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    };
    const roots = ['semantic-release', ...names(real), 'conventional-changelog-conventionalcommits'];
    const seen = new Set<string>();
    const queue = roots.map((name) => `node_modules/${name}`);
    const refused: string[] = [];
    while (queue.length > 0) {
      const at = queue.pop()!;
      if (seen.has(at)) continue;
      seen.add(at);
      const entry = lock.packages[at];
      if (!entry) continue; // an optional dependency for another platform
      const engines = entry.engines?.node;
      if (engines && RELEASE_NODES.some((node) => !semver.satisfies(node, engines))) {
        refused.push(`${at}@${entry.version} (${engines})`);
      }
      for (const dependency of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
        const found = resolveInLock(lock.packages, at, dependency);
        if (found) queue.push(found);
      }
    }
    expect(seen.size).toBeGreaterThan(100);
    expect(refused).toEqual([]);
  });
});

describe('scripts/check-release-build.mjs (the last prepare step)', () => {
  const script = path.join(REPO_ROOT, 'scripts/check-release-build.mjs');

  function fakeBuild(packageVersion: string, printedVersion: string | undefined): string {
    const dir = tempDir('build');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ version: packageVersion }));
    mkdirSync(path.join(dir, 'action'));
    writeFileSync(path.join(dir, 'action/main.cjs'), '"use strict";\n');
    if (printedVersion !== undefined) {
      mkdirSync(path.join(dir, 'build'));
      const binary = path.join(dir, `build/provider-${process.platform}-${process.arch}`);
      writeFileSync(binary, `#!/bin/sh\necho ${printedVersion}\n`);
      chmodSync(binary, 0o755);
    }
    return dir;
  }

  it('passes when package.json, the bundle and the binary carry the version', () => {
    const result = run(
      process.execPath,
      [script, '1.1.0'],
      fakeBuild('1.1.0', '1.1.0'),
      cleanEnv('/nonexistent'),
    );
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('carry 1.1.0');
  });

  it('refuses a binary that reports another version, a package.json not bumped, and a missing binary', () => {
    const stale = run(
      process.execPath,
      [script, '1.1.0'],
      fakeBuild('1.1.0', '1.0.0'),
      cleanEnv('/nonexistent'),
    );
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('--version printed "1.0.0", not 1.1.0');

    const missing = run(
      process.execPath,
      [script, '1.1.0'],
      fakeBuild('1.0.0', undefined),
      cleanEnv('/nonexistent'),
    );
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('package.json says version 1.0.0, not 1.1.0');
    expect(missing.stderr).toContain('npm run build:binary did not write it');
  });
});

interface LockEntry {
  version?: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

interface PackageJson {
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
}

function readPackage(name: string): PackageJson {
  return JSON.parse(
    readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8'),
  ) as PackageJson;
}

/** Where Node finds `dependency` from the package installed at `at` (a package-lock.json `packages` key). */
function resolveInLock(
  packages: Record<string, LockEntry>,
  at: string,
  dependency: string,
): string | undefined {
  let base = at;
  for (;;) {
    const candidate = `${base}/node_modules/${dependency}`;
    if (candidate in packages) return candidate;
    const index = base.lastIndexOf('/node_modules/');
    if (index < 0) break;
    base = base.slice(0, index);
  }
  const top = `node_modules/${dependency}`;
  return top in packages ? top : undefined;
}
