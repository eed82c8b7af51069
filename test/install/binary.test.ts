/**
 * The single executable (`npm run build:binary`: Node's SEA with the bundle injected by postject), built for this
 * machine into a temporary folder and run with no Node.js on PATH and no node_modules anywhere near: --version,
 * verify, lock (the HCL parser's WebAssembly, embedded) and a publish against the emulator.
 * A machine whose node binary cannot become a single executable skips the build and prints why (the script's
 * own check, also used by `npm run build:binary`).
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_NODE, buildBinary, cannotBuild, releaseNode } from '../../scripts/build-binary.mjs';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { freePort } from '../runtask/send/helpers.js';
import { tempRoot } from '../helpers/tmp.js';
import {
  FAST,
  PLATFORMS,
  RELEASE,
  SIGNER_KEY_FILE,
  expectNoTokens,
  runProcess,
  VERSION,
  tamperedRelease,
  writeRequests,
} from './helpers.js';

const emulator = emulatorPerTest();
// Built with the node running the tests: Node 24's is the release's; .ci/run also runs this file on 22 and 26.
const reason = cannotBuild(process.execPath);
if (reason !== undefined) process.stderr.write(`single executable not built on this machine: ${reason}\n`);
/** No node on PATH: only the system's folders (the binary must carry its own runtime). */
const NO_NODE = { PATH: '/usr/bin:/bin' };

let binary = '';

describe.skipIf(reason !== undefined)('the single executable', () => {
  beforeAll(async () => {
    // Outside the repository: no node_modules or package.json to fall back on.
    // Into a folder that does not exist yet, as build/ in a fresh clone.
    binary = await buildBinary(path.join(tempRoot('sea'), 'build', 'provider'), process.execPath);
  }, 120_000);

  it(`npm run build:binary builds with Node ${RELEASE_NODE}, the release's line, whatever node runs it`, () => {
    const version = execFileSync(releaseNode(), ['--version'], { encoding: 'utf8' });
    expect(version).toMatch(new RegExp(`^v${RELEASE_NODE}\\.`));
  });

  it('is a copy of node with the program injected: --version without Node.js on PATH', async () => {
    expect(fs.statSync(binary).mode & 0o111).not.toBe(0);
    const result = await runProcess(binary, ['--version'], { cwd: tempRoot('v'), env: NO_NODE });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${VERSION}\n`);
    const help = await runProcess(binary, ['verify', '--help'], { cwd: tempRoot('h'), env: NO_NODE });
    expect(help.stdout).toContain('Usage: provider verify [options] [dir]');
  });

  it('verify: a good release verifies, a bad release is exit 3', async () => {
    const ok = await runProcess(
      binary,
      ['verify', RELEASE, '--key', SIGNER_KEY_FILE, '--offline', '--json'],
      {
        cwd: tempRoot('verify'),
        env: NO_NODE,
      },
    );
    expect(ok.exitCode, ok.stderr).toBe(0);
    const doc = JSON.parse(ok.stdout) as { platforms: { os: string; arch: string; hashes: string[] }[] };
    expect(doc.platforms.map((p) => `${p.os}_${p.arch}`).sort()).toEqual(PLATFORMS);
    for (const p of doc.platforms) expect(p.hashes[0]).toMatch(/^h1:/);
    const bad = await runProcess(
      binary,
      ['verify', tamperedRelease(tempRoot('bad')), '--key', SIGNER_KEY_FILE, '--offline'],
      {
        cwd: tempRoot('verify-bad'),
        env: NO_NODE,
      },
    );
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).toContain('linux_amd64.zip');
  });

  it('publishes the fixture release to the emulator, and lock writes the block with the embedded parser', async () => {
    const e = await emulator();
    const cwd = tempRoot('publish');
    const where = ['--hostname', e.url, '--organization', e.organization];
    const published = await runProcess(
      binary,
      ['publish', RELEASE, '--key', SIGNER_KEY_FILE, ...where, '--json'],
      {
        cwd,
        env: { ...NO_NODE, TFE_TOKEN: e.ownerToken, ...FAST },
      },
    );
    expect(published.exitCode, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ ok: true, check: { status: 'passed' } });
    expectNoTokens(published.stdout + published.stderr, e, 'the output');
    expect(e.store.data.platforms.filter((p) => p.binary.uploadedAt !== null)).toHaveLength(5);
    e.requestLog.clear();
    const again = await runProcess(binary, ['publish', RELEASE, '--key', SIGNER_KEY_FILE, ...where], {
      cwd,
      env: { ...NO_NODE, TFE_TOKEN: e.ownerToken, ...FAST },
    });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(writeRequests(e)).toEqual([]);
    // An existing lock file holding another provider: the block is merged, the other one kept.
    const other = 'provider "registry.terraform.io/hashicorp/null" {\n  version = "3.2.4"\n}\n';
    fs.writeFileSync(path.join(cwd, '.terraform.lock.hcl'), other);
    const locked = await runProcess(binary, ['lock', RELEASE, '--key', SIGNER_KEY_FILE, ...where], {
      cwd,
      env: NO_NODE,
    });
    expect(locked.exitCode, locked.stderr).toBe(0);
    const lockFile = fs.readFileSync(path.join(cwd, '.terraform.lock.hcl'), 'utf8');
    expect(lockFile).toContain(other); // kept byte for byte (the new block goes in address order)
    expect(lockFile.match(/"h1:/g)).toHaveLength(5);
  });

  it('runtask serve runs its handlers inside it (the handler runner is the executable itself), send judges them', async () => {
    const cwd = tempRoot('runtask');
    const env = { ...NO_NODE, RUNTASK_HMAC_KEY: 'test-hmac-key-not-a-secret' };
    // The platform's port is fixed so the integrator can be told where callbacks may go.
    const platformPort = await freePort();
    const serve = spawn(
      binary,
      [
        'runtask',
        'serve',
        '--port',
        '0',
        '--json',
        '--state-dir',
        path.join(cwd, 'state'),
        '--exec',
        'echo checked',
        '--platform-host',
        `http://127.0.0.1:${platformPort}`,
      ],
      { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        serve.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split('\n')[0];
          if (out.includes('\n')) resolve((JSON.parse(line!) as { url: string }).url);
        });
        serve.on('exit', (code) => reject(new Error(`runtask serve exited (${code})`)));
      });
      const args = ['runtask', 'send', url, '--port', String(platformPort), '--expect', 'passed', '--json'];
      const sent = await runProcess(binary, args, { cwd, env });
      expect(sent.exitCode, sent.stdout + sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout)).toMatchObject({ ok: true });
    } finally {
      serve.kill('SIGTERM');
    }
  });

  it('runtask callback refuses a SARIF report with a wrong level, naming where', async () => {
    const cwd = tempRoot('sarif');
    const report = {
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 't' } }, results: [{ level: 'fatal', message: { text: 'x' } }] }],
    };
    fs.writeFileSync(path.join(cwd, 'bad.sarif'), JSON.stringify(report));
    const url = 'http://127.0.0.1:9/api/v2/task-results/x/callback';
    const result = await runProcess(
      binary,
      [
        'runtask',
        'callback',
        '--url',
        url,
        '--platform-host',
        'http://127.0.0.1:9',
        '--outcomes',
        'bad.sarif',
      ],
      { cwd, env: { ...NO_NODE, RUNTASK_ACCESS_TOKEN: 'not-a-real-token' } },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      'runs[0].results[0].level must be one of none, note, warning, error (found "fatal")',
    );
  });

  it('refuses every JavaScript configuration file with a way out, on the Node it was built with', async () => {
    // One behaviour whatever Node built it: Node 24's single executable could reach a CommonJS file through
    // cosmiconfig's require fallback, Node 20's could import none (src/config/load.ts, JS_REFUSED).
    const forms: { file: string; text: string; args: string[] }[] = [
      { file: 'provider.config.js', text: 'module.exports = { organization: "x" };\n', args: [] },
      { file: 'provider.config.mjs', text: 'export default { organization: "x" };\n', args: [] },
      {
        file: 'settings.cjs',
        text: 'module.exports = { organization: "x" };\n',
        args: ['--config', 'settings.cjs'],
      },
    ];
    for (const form of forms) {
      const cwd = tempRoot('config');
      fs.writeFileSync(path.join(cwd, form.file), form.text);
      const result = await runProcess(
        binary,
        ['versions', 'list', '--hostname', 'http://127.0.0.1:9', ...form.args],
        { cwd, env: NO_NODE },
      );
      expect(result.exitCode, form.file).toBe(2);
      expect(result.stderr, form.file).toContain(
        `${form.file}: the single executable reads JSON and YAML only`,
      );
      expect(result.stderr, form.file).toContain('.providerrc.json');
    }
  });
});
