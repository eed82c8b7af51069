/**
 * The whole run task rehearsed offline: `runtask send --config-version <folder>` serves the folder as the run's
 * configuration version, a real `runtask serve --with-configuration` downloads and unpacks it, and its handler,
 * `provider lock check "$RUNTASK_CONFIGURATION_DIR" --format sarif`, holds the lock file against an emulator
 * with the fixture release published. A good lock file passes; a bad one fails with outcomes naming the
 * provider and the hash; a hostile archive fails the task, naming the entry, and the handler never runs.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { emulatorPerTest } from '../../helpers/emulator/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { ADDRESS, FIXTURE_BLOCK, HEADER } from '../../lockfile/helpers.js';
import { publishAll } from '../../commands/helpers.js';
import { BIN, ensureBuilt, spawnServe, type ServeProcess } from '../serveProcess.js';
import { KEY, freePort, sendCli } from './helpers.js';

const start = emulatorPerTest();
const NEVER_SERVED = 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

let serve: ServeProcess | undefined;
beforeAll(() => ensureBuilt(), 300_000);
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
});

function addressOf(emulator: Emulator): string {
  return `${new URL(emulator.url).host}/${emulator.organization}/example`.toLowerCase();
}

/** A configuration folder: a `main.tf` and a lock file holding `block` under the emulator's address. */
function configuration(emulator: Emulator, block: string): string {
  const dir = tempDir('configuration');
  writeFileSync(join(dir, 'main.tf'), 'terraform {}\n');
  mkdirSync(join(dir, 'modules', 'net'), { recursive: true });
  writeFileSync(join(dir, 'modules', 'net', 'main.tf'), '# a module\n');
  writeFileSync(
    join(dir, '.terraform.lock.hcl'),
    `${HEADER}${block.replace(ADDRESS, addressOf(emulator))}\n`,
  );
  return dir;
}

/** `runtask serve --with-configuration` whose handler is `provider lock check` against the emulator. */
async function integrator(emulator: Emulator, platformPort: number): Promise<ServeProcess> {
  const dir = tempDir('serve');
  const exec = [
    `"${process.execPath}" "${BIN}" lock check "$RUNTASK_CONFIGURATION_DIR" --format sarif`,
    `--hostname ${emulator.url} --organization ${emulator.organization}`,
  ].join(' ');
  serve = await spawnServe({
    platform: { url: `http://127.0.0.1:${platformPort}` },
    stateDir: join(dir, 'state'),
    exec,
    key: KEY,
    args: ['--with-configuration'],
    env: { TFE_TOKEN: emulator.ownerToken },
    cwd: dir,
  });
  return serve;
}

/** `runtask send` serving `configVersion`, with the preview page written; its output and the page. */
async function send(
  url: string,
  port: number,
  configVersion: string,
  expected: 'passed' | 'failed',
): Promise<{ exitCode: number; stdout: string; page: string }> {
  const page = join(tempDir('page'), 'task.html');
  const result = await sendCli(
    url,
    port,
    ['--config-version', configVersion, '--expect', expected, '--report', page, '--max-duration', '2m'],
    { RUNTASK_HMAC_KEY: KEY },
  );
  return {
    exitCode: result.exitCode,
    stdout: result.stdout + result.stderr,
    page: readFileSync(page, 'utf8'),
  };
}

describe('runtask serve --with-configuration and runtask send --config-version <folder>', () => {
  it('passes a lock file holding only hashes the registry serves', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const port = await freePort();
    const { url } = await integrator(emulator, port);
    const result = await send(url, port, configuration(emulator, FIXTURE_BLOCK), 'passed');
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toContain('download   GET configuration version → 302');
    const fetched = await serve!.waitForEvent('configuration.fetched');
    expect(fetched.entries).toBe(5);
  }, 120_000);

  it('fails a lock file with a hash the registry never served, outcomes naming the provider and the hash', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const port = await freePort();
    const { url } = await integrator(emulator, port);
    const block = FIXTURE_BLOCK.replace('  hashes = [\n', `  hashes = [\n    "${NEVER_SERVED}",\n`);
    const result = await send(url, port, configuration(emulator, block), 'failed');
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.page).toContain(addressOf(emulator));
    expect(result.page).toContain(NEVER_SERVED);
    expect(result.page).not.toContain('No outcomes were reported.');
  }, 120_000);

  it('fails the task, naming the entry, when the configuration version holds a link', async () => {
    const emulator = await start();
    const port = await freePort();
    const { url } = await integrator(emulator, port);
    // One symbolic link entry, `escape` → /etc, as a raw ustar header.
    const header = Buffer.alloc(512);
    header.write('escape', 0);
    header.write('0000644\0', 100);
    header.write('00000000000\0', 124);
    header.write('14500000000\0', 136);
    header.write('2', 156);
    header.write('/etc', 157);
    header.write('ustar\0' + '00', 257);
    header.write('        ', 148);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
    const archive = join(tempDir('hostile'), 'cv.tar.gz');
    writeFileSync(archive, gzipSync(Buffer.concat([header, Buffer.alloc(1024)])));
    const result = await send(url, port, archive, 'failed');
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toContain('The check could not start: the configuration version was refused');
    expect(result.page).toMatch(
      /escape(&quot;|")? is a symbolic link to (&quot;|")?\/etc(&quot;|")?, an absolute path/,
    );
    expect(serve!.events().some((e) => e.event === 'handler.started')).toBe(false);
  }, 120_000);
});

describe('with-configuration per route', () => {
  it('hands the configuration to the routes that ask for it, and only to them', async () => {
    const port = await freePort();
    const dir = tempDir('routes');
    const routes = join(dir, 'routes.yaml');
    writeFileSync(
      routes,
      [
        'routes:',
        '  - path: /with',
        '    hmac-key-env: ROUTE_KEY',
        '    exec: test -f "$RUNTASK_CONFIGURATION_DIR/modules/net/main.tf" && test -L "$RUNTASK_CONFIGURATION_DIR/net.tf" && echo "configuration at hand"',
        '    with-configuration: true',
        `    platform-hosts: ["http://127.0.0.1:${port}"]`,
        '  - path: /without',
        '    hmac-key-env: ROUTE_KEY',
        '    exec: test -z "$RUNTASK_CONFIGURATION_DIR" && echo "no configuration"',
        `    platform-hosts: ["http://127.0.0.1:${port}"]`,
        '',
      ].join('\n'),
    );
    const folder = tempDir('configuration');
    mkdirSync(join(folder, 'modules', 'net'), { recursive: true });
    writeFileSync(join(folder, 'modules', 'net', 'main.tf'), '# a module\n');
    // A link inside the folder: packed as HCP Terraform packs it (a link), unpacked by the integrator.
    symlinkSync('modules/net/main.tf', join(folder, 'net.tf'));
    serve = await spawnServe({
      platform: { url: `http://127.0.0.1:${port}` },
      stateDir: join(dir, 'state'),
      exec: '',
      key: KEY,
      args: ['--routes', routes],
      env: { ROUTE_KEY: KEY },
      cwd: dir,
    });
    for (const [path, said] of [
      ['/with', 'configuration at hand'],
      ['/without', 'no configuration'],
    ]) {
      const result = await sendCli(
        new URL(path!, serve.url).href,
        port,
        ['--config-version', folder, '--expect', 'passed'],
        { RUNTASK_HMAC_KEY: KEY },
      );
      expect(result.exitCode, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain(said);
    }
  }, 120_000);
});
