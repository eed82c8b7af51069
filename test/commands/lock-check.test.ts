/**
 * `provider lock check [dir]`: a configuration's lock file held against what the private registry (the emulator,
 * with the fixture release published) serves. Expected hashes are the fixture's pinned ones (test/lockfile/
 * helpers.ts), not computed by src/. Every run must only read the registry (GETs) and never print the token or a
 * download link.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARCHIVIST_PREFIX } from '../../src/emulator/links.js';
import type { Emulator } from '../../src/emulator/server.js';
import { readJunit } from '../../src/runtask/formats/junit.js';
import { readSarif } from '../../src/runtask/formats/sarif.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { runCli } from '../helpers/cli.js';
import type { CliResult } from '../helpers/result.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempRoot } from '../helpers/tmp.js';
import { ADDRESS, FIXTURE_BLOCK, HEADER, NEVER_SERVED, PUBLIC_BLOCK } from '../lockfile/helpers.js';
import { FIXTURE_H1 } from '../release/helpers.js';
import { cli, publishAll } from './helpers.js';

const start = emulatorPerTest();

const LINUX_AMD64_H1 = FIXTURE_H1.linux_amd64;

function addressOf(emulator: Emulator): string {
  return `${new URL(emulator.url).host}/${emulator.organization}/example`.toLowerCase();
}

/** A configuration folder whose lock file holds `blocks` (the fixture's block under the emulator's address). */
function configuration(emulator: Emulator, ...blocks: string[]): string {
  const dir = tempRoot('configuration');
  const text = blocks.map((b) => b.replace(ADDRESS, addressOf(emulator))).join('\n\n');
  fs.writeFileSync(path.join(dir, '.terraform.lock.hcl'), `${HEADER}${text}\n`);
  return dir;
}

async function check(emulator: Emulator, dir: string, ...flags: string[]): Promise<CliResult> {
  const result = await cli(emulator, ['lock', 'check', dir, ...flags]);
  // GETs only, and neither the token nor a download link in what was printed.
  expect(emulator.requestLog.records.filter((r) => r.method !== 'GET')).toEqual([]);
  for (const text of [result.stdout, result.stderr]) {
    expect(text).not.toContain(emulator.ownerToken);
    expect(text).not.toContain(ARCHIVIST_PREFIX);
  }
  return result;
}

describe('provider lock check', () => {
  it('passes (exit 0) a lock file holding only hashes the registry serves, every zip downloaded', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const result = await check(emulator, configuration(emulator, FIXTURE_BLOCK));
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('1 provider hold up against');
    expect(result.stdout).toContain('(h1: for linux_amd64)');
    // SHA256SUMS, its signature, the five zips; and the first zip's Range request, answered whole (the platform
    // documents no ranges), its body left unread.
    expect(emulator.requestLog.records.filter((r) => r.path.startsWith(ARCHIVIST_PREFIX))).toHaveLength(8);
  });

  it('takes localterraform.com as the private registry (the fixture lock file)', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const result = await check(emulator, path.join(REPO_ROOT, 'fixtures', 'lock'), '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as { ok: boolean; providers: { origin: string }[] };
    expect(document.ok).toBe(true);
    expect(document.providers).toEqual([
      { address: 'localterraform.com/example-org/example', version: '1.2.3', origin: 'private', line: 4 },
    ]);
  });

  it('finds (exit 3) a hash the registry never served, naming it and how to rewrite the block', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const block = FIXTURE_BLOCK.replace('  hashes = [\n', `  hashes = [\n    "${NEVER_SERVED}",\n`);
    const dir = configuration(emulator, block);
    const result = await check(emulator, dir);
    expect(result.exitCode).toBe(3);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(
      `${addressOf(emulator)} 1.2.3: ${NEVER_SERVED} is not the hash of any package`,
    );
    expect(lines[0]).toContain('provider lock --registry --version 1.2.3 --name example --lock-file');
    expect(lines[1]).toBe(
      `1 finding in ${path.join(dir, '.terraform.lock.hcl')} (1 provider checked against ${addressOf(emulator).replace(/\/example$/, '')} (h1: for linux_amd64))`,
    );
  });

  it('finds a provider from another host, unless --allow admits it', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const dir = configuration(emulator, PUBLIC_BLOCK, FIXTURE_BLOCK);
    const refused = await check(emulator, dir);
    expect(refused.exitCode).toBe(3);
    expect(refused.stdout).toContain(
      'registry.terraform.io/hashicorp/random is not a provider of the private registry',
    );
    expect(refused.stdout).toContain('--allow registry.terraform.io/hashicorp/random');
    // The mirror command as it takes a provider: <namespace>/<type>, the public registry being its default origin.
    expect(refused.stdout).toContain('(provider mirror hashicorp/random copies it, verified)');
    const admitted = await check(emulator, dir, '--allow', 'registry.terraform.io/hashicorp/*');
    expect(admitted.exitCode, admitted.stdout).toBe(0);
    expect(admitted.stdout).toContain('2 providers hold up');
  });

  it("finds a lock file without linux_amd64's h1: (made on a Mac), and passes it for the Macs alone", async () => {
    const emulator = await start();
    await publishAll(emulator);
    const dir = configuration(emulator, FIXTURE_BLOCK.replace(`    "${LINUX_AMD64_H1}",\n`, ''));
    const result = await check(emulator, dir, '--json');
    expect(result.exitCode).toBe(3);
    const document = JSON.parse(result.stdout) as { ok: boolean; findings: Record<string, unknown>[] };
    expect(document.ok).toBe(false);
    expect(document.findings).toEqual([
      expect.objectContaining({
        rule: 'platform-hash-missing',
        provider: addressOf(emulator),
        version: '1.2.3',
        subject: 'linux_amd64',
        line: 4,
      }),
    ]);
    expect(document.findings[0]!.message).toContain(LINUX_AMD64_H1);
    const macs = await check(emulator, dir, '--platform', 'darwin_arm64', '--platform', 'darwin_amd64');
    expect(macs.exitCode, macs.stdout).toBe(0);
  });

  it('finds a version the registry does not serve', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const dir = configuration(emulator, FIXTURE_BLOCK.replace('version = "1.2.3"', 'version = "9.9.9"'));
    const result = await check(emulator, dir);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain(`${addressOf(emulator)} 9.9.9 is not served by the private registry`);
    expect(result.stdout).toContain('provider versions list --name example');
  });

  it('finds a version terraform init would refuse as served (a wrong h1: in packages)', async () => {
    const emulator = await start({
      packageHashes: true,
      faults: [{ path: '**/download/*/*', wrongHash: 'h1', platform: 'linux_amd64' }],
    });
    await publishAll(emulator);
    const result = await check(emulator, configuration(emulator, FIXTURE_BLOCK), '--json');
    expect(result.exitCode).toBe(3);
    const document = JSON.parse(result.stdout) as { findings: { rule: string; message: string }[] };
    expect(document.findings.map((f) => f.rule)).toEqual(['version-refused']);
    expect(document.findings[0]!.message).toMatch(/linux_amd64: the registry serves h1:\S+ in packages/);
  });

  it('finds a missing lock file without asking the registry anything', async () => {
    const emulator = await start();
    const dir = tempRoot('configuration');
    const result = await check(emulator, dir);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain(`${path.join(dir, '.terraform.lock.hcl')} does not exist`);
    expect(emulator.requestLog.records).toEqual([]);
  });

  // That the SARIF is valid (the published schema and GitHub's ingestion rules) is checked by Microsoft's SARIF
  // Multitool in ./lock-check-sarif.test.ts.
  it('writes SARIF 2.1.0 that the run task outcomes read, on stdout or in --output', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const block = FIXTURE_BLOCK.replace(`    "${LINUX_AMD64_H1}",\n`, `    "${NEVER_SERVED}",\n`);
    const dir = configuration(emulator, block, PUBLIC_BLOCK);
    const result = await check(emulator, dir, '--format', 'sarif');
    expect(result.exitCode).toBe(3);
    const sarif = JSON.parse(result.stdout) as unknown;
    const read = await readSarif(sarif);
    expect(read.tools).toEqual(['provider lock check']);
    expect(read.findings.map((f) => f.level)).toEqual(['error', 'error', 'error']);
    expect(read.findings.map((f) => f.message).join('\n')).toContain(NEVER_SERVED);

    const file = path.join(dir, 'lock.sarif');
    const written = await check(emulator, dir, '--format', 'sarif', '--output', file);
    expect(written.exitCode).toBe(3);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(sarif);
    expect(written.stdout).toContain('3 findings in');
  });

  it('writes JUnit XML, a failed case per finding and a passing one per sound provider', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const dir = configuration(emulator, FIXTURE_BLOCK, PUBLIC_BLOCK);
    const result = await check(emulator, dir, '--format', 'junit');
    expect(result.exitCode).toBe(3);
    const junit = readJunit(result.stdout);
    expect(junit.tests).toBe(2);
    expect(junit.findings).toHaveLength(1);
    expect(junit.findings[0]!.message).toContain('registry.terraform.io/hashicorp/random');
  });

  it('holds versions to a policy file, which may admit providers too', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const dir = configuration(emulator, FIXTURE_BLOCK, PUBLIC_BLOCK);
    const policy = path.join(dir, 'policy.yaml');
    fs.writeFileSync(
      policy,
      [
        'allow: ["registry.terraform.io/hashicorp/*"]',
        'providers:',
        `  "*/${emulator.organization}/example": { versions: "~> 2.0" }`,
      ].join('\n'),
    );
    const result = await check(emulator, dir, '--policy', policy);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain(
      `${addressOf(emulator)} 1.2.3 does not meet the policy's versions "~> 2.0"`,
    );
    expect(result.stdout).not.toContain('hashicorp/random is not a provider');
  });

  it('leaves provider lock its release folder: one named check is given as ./check', async () => {
    const cwd = tempRoot('project');
    fs.cpSync(path.join(REPO_ROOT, 'fixtures', 'release'), path.join(cwd, 'check'), { recursive: true });
    const key = path.join(REPO_ROOT, 'fixtures', 'keys', 'signer.pub.asc');
    const argv = ['lock', './check', '--key', key, '--organization', 'example-org', '--dry-run'];
    const result = await runCli(argv, { cwd });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('Dry run: .terraform.lock.hcl would be created');
  });

  it.each([
    [['--format', 'xml'], '--format "xml" is not a report format'],
    [['--format', 'sarif', '--json'], 'Give either --json or --format, not both'],
    [['--output', 'x.sarif'], '--output writes the --format report to a file'],
    [['--allow', 'hashicorp/random'], '"hashicorp/random" is not a host/namespace/type pattern'],
  ])('refuses %j before any request (exit 2)', async (flags, message) => {
    const emulator = await start();
    const result = await check(emulator, tempRoot('configuration'), ...flags);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(message);
    expect(emulator.requestLog.records).toEqual([]);
  });
});
