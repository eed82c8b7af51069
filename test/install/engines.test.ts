/**
 * The Node.js the package declares (package.json's engines) is the one everything else assumes: every library
 * the bundle holds runs on it (their own engines, read from the lock file), the shim says so on an older Node
 * before loading anything, npm refuses an install on an older one (engine-strict in the project's .npmrc), and
 * the Action, the GitLab component and the single executable run Node 24.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import semver from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { RELEASE_NODE } from '../../scripts/build-binary.mjs';
import { NODE_LINES } from '../../scripts/with-node.mjs';
import { REPO_ROOT } from '../helpers/paths.js';
import { ensureBuilt } from '../helpers/spawn-cli.js';
import { tempRoot } from '../helpers/tmp.js';

const read = (file: string): string => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
const floor = semver.minVersion(pkg.engines.node)!.version;

beforeAll(() => ensureBuilt(), 120_000);

describe('the declared Node.js', () => {
  it('is 22.14 or later, the floor the tests run on (scripts/with-node.mjs)', () => {
    expect(pkg.engines.node).toBe('>=22.14');
    expect(NODE_LINES[22]).toBe(floor);
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: unknown }> };
    expect(lock.packages['']?.engines).toEqual(pkg.engines);
  });

  it('admits every library the bundle holds: each one’s own engines.node, from the lock file', () => {
    const licenses = JSON.parse(read('dist/bundle/licenses.json')) as { packages: { folder: string }[] };
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { version: string; engines?: { node?: string } | string[] }>;
    };
    expect(licenses.packages.length).toBeGreaterThan(50);
    const refused: string[] = [];
    for (const { folder } of licenses.packages) {
      const entry = lock.packages[folder];
      expect(entry, `${folder} in package-lock.json`).toBeDefined();
      const range = Array.isArray(entry!.engines) ? undefined : entry!.engines?.node;
      if (range !== undefined && !semver.satisfies(floor, range, { includePrerelease: true })) {
        refused.push(`${folder}@${entry!.version} needs Node ${range}`);
      }
    }
    expect(refused, `bundled libraries that do not run on Node ${floor}`).toEqual([]);
  });

  it('npm refuses to install the project on an older Node (engine-strict), saying which one it needs', () => {
    expect(read('.npmrc')).toMatch(/^engine-strict=true$/m);
    // npm as run by a Node that says it is 20.19.0: its engine check reads process.version.
    const dir = tempRoot('old-node');
    // The project's engines and .npmrc; no dependencies, so that nothing needs the network.
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'p', version: '1.0.0', engines: pkg.engines }),
    );
    fs.copyFileSync(path.join(REPO_ROOT, '.npmrc'), path.join(dir, '.npmrc'));
    const preload = path.join(dir, 'old-node.cjs');
    fs.writeFileSync(
      preload,
      "Object.defineProperty(process, 'version', { value: 'v20.19.0' });\n" +
        "Object.defineProperty(process.versions, 'node', { value: '20.19.0' });\n",
    );
    // The npm on PATH is a link to its bin/npm-cli.js.
    const cli = fs.realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
    const result = spawnSync(
      process.execPath,
      ['--require', preload, cli, 'install', '--dry-run', '--offline', '--ignore-scripts'],
      { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir } },
    );
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('Required: {"node":">=22.14"}');
  });

  it('the shim says which Node.js it needs before loading anything, exit 2 (the set-up is wrong)', () => {
    const preload = path.join(tempRoot('shim-old-node'), 'old-node.cjs');
    fs.writeFileSync(preload, "Object.defineProperty(process.versions, 'node', { value: '22.13.1' });\n");
    const result = spawnSync(
      process.execPath,
      ['--require', preload, path.join(REPO_ROOT, 'bin', 'provider.cjs'), '--version'],
      { encoding: 'utf8' },
    );
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('needs Node.js 22.14 or later, and this is Node.js 22.13.1');
  });

  it(`the Action, the GitLab component and the single executable run Node ${RELEASE_NODE}`, () => {
    const action = parseYaml(read('action.yml')) as { runs: { using: string } };
    expect(action.runs.using).toBe(`node${RELEASE_NODE}`);
    const [spec] = read('templates/publish.yml').split(/^---$/m);
    const inputs = (parseYaml(spec!) as { spec: { inputs: { image: { default: string } } } }).spec.inputs;
    expect(inputs.image.default).toMatch(new RegExp(`^node:${RELEASE_NODE}(-|$)`));
  });
});
