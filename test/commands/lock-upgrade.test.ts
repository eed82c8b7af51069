/**
 * `provider lock upgrade`: lock files in several folders move to the newest version the private registry serves
 * that their recorded constraints admit (as Terraform selects: hashicorp/terraform's `versions.MeetingConstraints`),
 * narrowed by `--to`, `--min-age` (the version's `created-at` in the registry) and `--only`; other providers'
 * blocks and every other byte stay. The hashes written are those `terraform providers lock` records: `h1:` per
 * platform, computed here independently from the zips' contents (dirhash's Hash1), and a `zh:` per SHA256SUMS line.
 * A zip that is not its signed bytes, or a lock file that does not parse, is exit 3 or 2 and no file is written.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseLockFile, readProviderBlock } from '../../src/lockfile/parse.js';
import { runCli } from '../helpers/cli.js';
import {
  addGpgKey,
  clients,
  createPlatform,
  createProvider,
  createVersion,
  emulatorPerTest,
  expectSuccess,
  keyIdOf,
  linkOf,
  upload,
} from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { ANSI } from './publish/helpers.js';
import { buildRelease, type OriginRelease } from '../mirror/origin.js';

const start = emulatorPerTest();
const PLATFORMS = ['darwin_arm64', 'linux_amd64'];
const DAY = 86_400_000;
const PUBLIC = [
  'provider "registry.terraform.io/hashicorp/random" {',
  '  version     = "3.6.3"',
  '  constraints = "~> 3.6"',
  '  hashes = [',
  '    "h1:publicHashStaysAsItIs=",',
  '  ]',
  '}',
].join('\n');

/** Publishes a built release of `example` through the API, as a publisher would; created `ageDays` ago. */
async function publishBuilt(
  e: Emulator,
  release: OriginRelease,
  ageDays: number,
  first: boolean,
): Promise<void> {
  const { owner } = clients(e);
  const org = e.organization;
  if (first) {
    await createProvider(owner, org, 'example');
    await addGpgKey(owner, org, 'signer');
  }
  const doc = await createVersion(owner, org, 'example', {
    version: release.version,
    'key-id': keyIdOf('signer'),
    protocols: ['6.0'],
  });
  expectSuccess(await upload(linkOf(doc, 'shasums-upload'), release.sums));
  expectSuccess(await upload(linkOf(doc, 'shasums-sig-upload'), release.sig));
  for (const platform of release.platforms) {
    const [os = '', arch = ''] = platform.split('_');
    const filename = `terraform-provider-example_${release.version}_${platform}.zip`;
    const bytes = release.zips.get(filename)!;
    const shasum = createHash('sha256').update(bytes).digest('hex');
    const platformDoc = await createPlatform(owner, org, 'example', release.version, {
      os,
      arch,
      filename,
      shasum,
      bytes,
    });
    expectSuccess(await upload(linkOf(platformDoc, 'provider-binary-upload'), bytes));
  }
  const stored = e.store.data.versions.find((v) => v.version === release.version)!;
  stored.createdAt = Date.now() - ageDays * DAY;
}

/** An emulator serving example 1.2.3 (30 days old), 1.3.0 (20), 1.4.0 (2) and 2.0.0 (1). */
async function world(): Promise<{ e: Emulator; releases: Map<string, OriginRelease> }> {
  const e = await start();
  const releases = new Map<string, OriginRelease>();
  const ages: [string, number][] = [
    ['1.2.3', 30],
    ['1.3.0', 20],
    ['1.4.0', 2],
    ['2.0.0', 1],
  ];
  for (const [i, [version, age]] of ages.entries()) {
    const release = await buildRelease(version, PLATFORMS);
    releases.set(version, release);
    await publishBuilt(e, release, age, i === 0);
  }
  return { e, releases };
}

/** The requests for zips since the `from`th request of the log. */
const zipGets = (e: Emulator, from: number): number =>
  e.requestLog.records.slice(from).filter((r) => r.method === 'GET' && r.object === 'provider-binary').length;

/** How many times each zip was fetched whole (a GET without Range) since the `from`th request, by platform id. */
function wholeFetches(e: Emulator, from: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of e.requestLog.records.slice(from))
    if (r.method === 'GET' && r.object === 'provider-binary' && r.range === undefined)
      counts.set(r.owner!, (counts.get(r.owner!) ?? 0) + 1);
  return counts;
}

const addressOf = (e: Emulator): string => `${new URL(e.url).host}/${e.organization}/example`;

/** dirhash's Hash1 of a zip holding one file, from the file's name and content (as buildRelease makes them). */
function independentH1(version: string, platform: string): string {
  const name = `terraform-provider-example_v${version}`;
  const content = `binary ${version} ${platform}`;
  const line = `${createHash('sha256').update(content).digest('hex')}  ${name}\n`;
  return `h1:${createHash('sha256').update(line).digest('base64')}`;
}

/** Every hash `terraform providers lock` records for `version`: an h1: per platform, a zh: per SHA256SUMS line. */
function expectedHashes(release: OriginRelease): string[] {
  const zh = release.sums
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => `zh:${line.slice(0, 64)}`);
  return [...PLATFORMS.map((p) => independentH1(release.version, p)), ...zh].sort();
}

/** A lock file holding example at `version` with `constraints`, and the public provider's block after it. */
function lockText(e: Emulator, version: string, constraints: string, hashes: string[]): string {
  return [
    '# This file is maintained automatically by "terraform init".',
    '# Manual edits may be lost in future updates.',
    '',
    `provider "${addressOf(e)}" {`,
    `  version     = "${version}"`,
    `  constraints = "${constraints}"`,
    '  hashes = [',
    ...hashes.map((h) => `    "${h}",`),
    '  ]',
    '}',
    '',
    PUBLIC,
    '',
  ].join('\n');
}

/** Three configurations: a (~> 1.2), b (>= 1.2.0) and c/deep (~> 1.2), each locked at 1.2.3. */
function configurations(e: Emulator, releases: Map<string, OriginRelease>): string {
  const root = tempRoot();
  const old = expectedHashes(releases.get('1.2.3')!);
  for (const [dir, constraints] of [
    ['a', '~> 1.2'],
    ['b', '>= 1.2.0'],
    [path.join('c', 'deep'), '~> 1.2'],
  ] as const) {
    fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, dir, '.terraform.lock.hcl'), lockText(e, '1.2.3', constraints, old));
  }
  // Never walked into.
  fs.mkdirSync(path.join(root, 'a', '.terraform'), { recursive: true });
  fs.writeFileSync(path.join(root, 'a', '.terraform', '.terraform.lock.hcl'), 'not { a lock file');
  return root;
}

function upgrade(e: Emulator, cwd: string, ...args: string[]) {
  return upgradeOn({ tty: false }, e, cwd, ...args);
}

/** The same, on a terminal or not. */
function upgradeOn(options: { tty: boolean }, e: Emulator, cwd: string, ...args: string[]) {
  return runCli(['lock', 'upgrade', ...args, '--hostname', e.url, '--organization', e.organization], {
    cwd,
    homeDir: cwd,
    env: { TFE_TOKEN: e.ownerToken, NO_COLOR: '1' },
    tty: options.tty,
  });
}

/** The example block of a lock file as read back. */
async function exampleBlock(e: Emulator, file: string) {
  const parsed = await parseLockFile(fs.readFileSync(file, 'utf8'), file);
  const block = parsed.providers.find((p) => p.label === addressOf(e))!;
  return readProviderBlock(block, file);
}

describe('provider lock upgrade', () => {
  it('--recursive: each lock file to the newest version its constraints admit, hashes as terraform records them', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    const before = fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8');
    const seeded = e.requestLog.records.length;
    const result = await upgrade(e, root, '--recursive');
    expect(result.exitCode, result.stderr).toBe(0);
    for (const [dir, version, constraints] of [
      ['a', '1.4.0', '~> 1.2'],
      ['b', '2.0.0', '>= 1.2.0'],
      [path.join('c', 'deep'), '1.4.0', '~> 1.2'],
    ] as const) {
      const file = path.join(root, dir, '.terraform.lock.hcl');
      const block = await exampleBlock(e, file);
      expect([dir, block.version, block.constraints]).toEqual([dir, version, constraints]);
      expect(block.hashes).toEqual(expectedHashes(releases.get(version)!));
      // Every other byte stays: the header, and the public provider's block.
      const text = fs.readFileSync(file, 'utf8');
      expect(text.startsWith(before.slice(0, before.indexOf('provider')))).toBe(true);
      expect(text.endsWith(`\n${PUBLIC}\n`)).toBe(true);
    }
    expect(fs.readFileSync(path.join(root, 'a', '.terraform', '.terraform.lock.hcl'), 'utf8')).toBe(
      'not { a lock file',
    );
    expect(result.stdout).toContain(
      `${addressOf(e)} 1.2.3 → 1.4.0 (2 lock files; h1: of 2 platforms, computed)`,
    );
    expect(result.stdout).toContain(
      `${addressOf(e)} 1.2.3 → 2.0.0 (1 lock file; h1: of 2 platforms, computed)`,
    );
    // Each zip of the two versions fetched once; and one Range request in the whole run, to learn whether the
    // host's links answer ranges (the emulator answers it whole, and it is left unread).
    const whole = wholeFetches(e, seeded);
    expect([whole.size, [...whole.values()].every((n) => n === 1)]).toEqual([2 * PLATFORMS.length, true]);
    expect(zipGets(e, seeded)).toBe(2 * PLATFORMS.length + 1);
    // The hashes were kept: one file per SHA256SUMS, named by its SHA-256.
    const kept = fs.readdirSync(path.join(root, '.cache', 'provider', 'lock-hashes'));
    expect(kept.sort()).toEqual(
      ['1.4.0', '2.0.0']
        .map((v) => `${createHash('sha256').update(releases.get(v)!.sums).digest('hex')}.json`)
        .sort(),
    );
    // The blocks pass provider lock check as the registry serves them.
    for (const dir of ['a', 'b']) {
      const check = await runCli(
        [
          'lock',
          'check',
          dir,
          '--platform',
          'linux_amd64,darwin_arm64',
          '--allow',
          'registry.terraform.io/hashicorp/random',
          '--hostname',
          e.url,
          '--organization',
          e.organization,
        ],
        { cwd: root, homeDir: root, env: { TFE_TOKEN: e.ownerToken, NO_COLOR: '1' } },
      );
      expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    }
  });

  it('--to, --min-age and --only narrow the choice, and say which newer versions were held and why', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    const to = await upgrade(e, root, 'b', '--to', '< 1.4', '--dry-run');
    expect(to.exitCode, to.stderr).toBe(0);
    expect(to.stdout).toContain(`${addressOf(e)} 1.2.3 → 1.3.0 (1 lock file; h1: of 2 platforms`);
    expect(to.stdout).toContain('2.0.0 not taken: excluded by --to');
    expect(fs.readFileSync(path.join(root, 'b', '.terraform.lock.hcl'), 'utf8')).toContain('"1.2.3"');

    const cooled = await upgrade(e, root, 'a', 'b', '--min-age', '7d', '--json');
    expect(cooled.exitCode, cooled.stderr).toBe(0);
    const doc = JSON.parse(cooled.stdout) as {
      blocks: { file: string; to: string; held: { version: string; reason: string }[] }[];
    };
    expect(doc.blocks.map((b) => [b.file, b.to])).toEqual([
      [path.join('a', '.terraform.lock.hcl'), '1.3.0'],
      [path.join('b', '.terraform.lock.hcl'), '1.3.0'],
    ]);
    const held = doc.blocks[1]!.held;
    expect(held.map((h) => h.version)).toEqual(['2.0.0', '1.4.0']);
    expect(held[1]!.reason).toMatch(/^held by --min-age until \d{4}-\d\d-\d\dT/);
    expect((await exampleBlock(e, path.join(root, 'b', '.terraform.lock.hcl'))).version).toBe('1.3.0');

    const none = await upgrade(e, root, 'a', '--only', 'registry.terraform.io/*/*');
    expect(none.exitCode, none.stderr).toBe(0);
    expect(none.stdout).toContain('No lock file changes.');
    expect((await exampleBlock(e, path.join(root, 'a', '.terraform.lock.hcl'))).version).toBe('1.3.0');
  });

  it('a zip the registry serves that is not its signed bytes: exit 3 naming it, the provider stays in every file', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    const platform = e.store.data.platforms.find(
      (p) => p.os === 'linux' && p.arch === 'amd64' && p.filename.includes('_1.4.0_'),
    )!;
    fs.appendFileSync(e.store.objectPath(platform.binary.key), 'x');
    const texts = ['a', 'b'].map((d) => fs.readFileSync(path.join(root, d, '.terraform.lock.hcl'), 'utf8'));
    // a moves to 1.4.0, which does not verify; b to 2.0.0, which does: neither is written.
    const result = await upgrade(e, root, 'a', 'b', '--json');
    expect(result.exitCode, result.stdout).toBe(3);
    const doc = JSON.parse(result.stdout) as {
      blocks: { to: string; moved: boolean; reason?: string; error?: string }[];
      failed: { address: string; version: string; message: string }[];
    };
    expect(doc.failed).toEqual([
      {
        address: addressOf(e),
        version: '1.4.0',
        message: expect.stringMatching(/1\.4\.0/) as string,
      },
    ]);
    expect(doc.failed[0]!.message).toMatch(/linux_amd64/);
    expect(doc.blocks.map((b) => [b.to, b.moved])).toEqual([
      ['1.2.3', false],
      ['1.2.3', false],
    ]);
    expect(doc.blocks[1]!.reason).toBe('another version of this provider did not verify');
    expect(['a', 'b'].map((d) => fs.readFileSync(path.join(root, d, '.terraform.lock.hcl'), 'utf8'))).toEqual(
      texts,
    );
  });

  it('a signature that is not over the SHA256SUMS served: exit 3 naming it, nothing written', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    // 1.4.0's signature replaced by 2.0.0's: a good signature by the registered key, over other bytes.
    const version = (v: string) => e.store.data.versions.find((stored) => stored.version === v)!;
    fs.copyFileSync(
      e.store.objectPath(version('2.0.0').shasumsSig.key),
      e.store.objectPath(version('1.4.0').shasumsSig.key),
    );
    const before = fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8');
    const result = await upgrade(e, root, 'a', '--json');
    expect(result.exitCode, result.stdout).toBe(3);
    const doc = JSON.parse(result.stdout) as { failed: { version: string; message: string }[] };
    expect(doc.failed.map((f) => f.version)).toEqual(['1.4.0']);
    expect(doc.failed[0]!.message).toMatch(/signature/i);
    expect(fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8')).toBe(before);
    // Nothing is kept in the cache for it either.
    expect(fs.existsSync(path.join(root, '.cache', 'provider', 'lock-hashes'))).toBe(false);
  });

  it('a block of a provider the registry does not have stays, named, exit 3; the others move', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    const file = path.join(root, 'a', '.terraform.lock.hcl');
    const missing = `${new URL(e.url).host}/${e.organization}/missing`;
    fs.appendFileSync(
      file,
      `\nprovider "${missing}" {\n  version = "1.0.0"\n  hashes = [\n    "h1:x=",\n  ]\n}\n`,
    );
    const result = await upgrade(e, root, 'a', '--json');
    expect(result.exitCode, result.stderr).toBe(3);
    const doc = JSON.parse(result.stdout) as { blocks: { address: string; to: string; reason?: string }[] };
    expect(doc.blocks.map((b) => [b.address, b.to, b.reason])).toEqual([
      [addressOf(e), '1.4.0', undefined],
      [missing, '1.0.0', `the registry does not serve ${missing}`],
    ]);
    expect((await exampleBlock(e, file)).version).toBe('1.4.0');
    expect(fs.readFileSync(file, 'utf8')).toContain(`provider "${missing}" {\n  version = "1.0.0"`);
  });

  it.each([
    [
      'a version that is no version',
      (text: string) => text.replace('version     = "1.2.3"', 'version     = "banana"'),
      /version "banana" is not a version/,
    ],
    [
      'a second block for the provider',
      (text: string) => `${text}\n${text.slice(text.indexOf('provider'), text.indexOf(PUBLIC))}`,
      /has a second block \(the first on line 4\)/,
    ],
  ])('%s: exit 2 naming its line, before any request, nothing written', async (_what, spoil, message) => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    const file = path.join(root, 'b', '.terraform.lock.hcl');
    fs.writeFileSync(file, spoil(fs.readFileSync(file, 'utf8')));
    const requests = e.requestLog.records.length;
    const result = await upgrade(e, root, 'a', 'b');
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain(path.join('b', '.terraform.lock.hcl'));
    expect(e.requestLog.records.length).toBe(requests);
  });

  it('a lock file that does not parse: exit 2 naming its line, before any request, nothing written', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    fs.writeFileSync(path.join(root, 'b', '.terraform.lock.hcl'), 'provider "x" {\n  version = \n}\n');
    const requests = e.requestLog.records.length;
    const texts = fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8');
    const result = await upgrade(e, root, 'a', 'b');
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`${path.join('b', '.terraform.lock.hcl').replaceAll('.', '\\.')}:\\d`),
    );
    expect(e.requestLog.records.length).toBe(requests);
    expect(fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8')).toBe(texts);
  });

  it('a lock file that is not a regular file: exit 2 naming it, with what lock upgrade takes', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    fs.mkdirSync(path.join(root, 'd', '.terraform.lock.hcl'), { recursive: true });
    const result = await upgrade(e, root, 'd');
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(path.join('d', '.terraform.lock.hcl'));
    expect(result.stderr).toContain(
      'hint: Give lock files, or folders holding a .terraform.lock.hcl that is a regular file.',
    );
  });

  it('a lock file that is a link: written where it points, the link kept; named twice, one file', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    // 0 shares a's lock file through a link, as teams share one lock file between environments; it sorts first,
    // and the file is still named where it is (what a commit adds).
    fs.mkdirSync(path.join(root, '0'));
    fs.symlinkSync(path.join('..', 'a', '.terraform.lock.hcl'), path.join(root, '0', '.terraform.lock.hcl'));
    const result = await upgrade(e, root, '0', 'a', '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as { files: { file: string; written: boolean }[] };
    expect(doc.files).toEqual([
      { file: path.join('a', '.terraform.lock.hcl'), changed: true, written: true },
    ]);
    expect(fs.lstatSync(path.join(root, '0', '.terraform.lock.hcl')).isSymbolicLink()).toBe(true);
    expect((await exampleBlock(e, path.join(root, '0', '.terraform.lock.hcl'))).version).toBe('1.4.0');
  });

  it('a second run of the same versions downloads no zip: their hashes come from the cache; a damaged one is ignored', async () => {
    const { e, releases } = await world();
    const root = configurations(e, releases);
    const cacheDir = path.join(root, 'hashes');
    const start = fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8');
    const first = await upgrade(e, root, 'a', '--cache-dir', cacheDir);
    expect(first.exitCode, first.stderr).toBe(0);
    const upgraded = fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8');
    expect(zipGets(e, 0)).toBeGreaterThan(0);

    // The same move again (another checkout of the same lock file): nothing downloaded, the same text written.
    fs.writeFileSync(path.join(root, 'a', '.terraform.lock.hcl'), start);
    const before = e.requestLog.records.length;
    const second = await upgrade(e, root, 'a', '--cache-dir', cacheDir);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain(`from the cache (${cacheDir}): no zip downloaded`);
    expect(second.stdout).toContain('1.2.3 → 1.4.0 (1 lock file; h1: of 2 platforms, from the cache)');
    expect(zipGets(e, before)).toBe(0);
    expect(fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8')).toBe(upgraded);

    // A damaged entry is no entry: the zips are downloaded again, and the same text written.
    const [entry] = fs.readdirSync(cacheDir);
    fs.writeFileSync(path.join(cacheDir, entry!), '{"shasums": "x", "h1": {}}');
    fs.writeFileSync(path.join(root, 'a', '.terraform.lock.hcl'), start);
    const again = e.requestLog.records.length;
    const third = await upgrade(e, root, 'a', '--cache-dir', cacheDir);
    expect(third.exitCode, third.stderr).toBe(0);
    expect(zipGets(e, again)).toBe(PLATFORMS.length + 1);
    expect(fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8')).toBe(upgraded);
  });

  it('shows the downloads: a progress display on a terminal, plain lines in CI, nothing with --json', async () => {
    const { e, releases } = await world();
    const of = `${e.organization}/example 1.4.0`;
    const zip = 'terraform-provider-example_1.4.0_linux_amd64.zip';

    const plain = await upgradeOn({ tty: false }, e, configurations(e, releases), 'a', '--no-cache');
    expect(plain.exitCode, plain.stderr).toBe(0);
    const lines = plain.stderr.trim().split('\n');
    expect(lines).toContain(`Downloading the ${PLATFORMS.length} zips of ${of}`);
    expect(lines).toContain(`Downloading ${zip} of ${of}`);
    expect(lines.filter((l) => l.startsWith(`Downloaded ${PLATFORMS.length} files of ${of}: `))).toHaveLength(
      1,
    );
    expect(plain.stderr).not.toMatch(ANSI);

    const tty = await upgradeOn({ tty: true }, e, configurations(e, releases), 'a', '--no-cache');
    expect(tty.exitCode, tty.stderr).toBe(0);
    expect(tty.stderr).toMatch(ANSI);
    expect(tty.stderr).toMatch(
      new RegExp(`✓ Downloaded ${PLATFORMS.length} files of ${of}: [\\d.]+ (B|KiB) in [\\d.]+m?s`),
    );

    const json = await upgradeOn({ tty: true }, e, configurations(e, releases), 'a', '--no-cache', '--json');
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      verified: [{ address: addressOf(e), version: '1.4.0', platforms: PLATFORMS, h1: 'computed' }],
    });
    expect(json.stderr).not.toMatch(/Download/);
    expect(json.stderr).not.toMatch(ANSI);
  });

  describe('--policy', () => {
    /** Writes the policy file `lines` (its providers: rule for the emulator's provider) into `root`. */
    function policy(e: Emulator, root: string, ...lines: string[]): string {
      const file = path.join(root, 'policy.yaml');
      fs.writeFileSync(
        file,
        ['providers:', `  "${addressOf(e)}":`, ...lines.map((l) => `    ${l}`), ''].join('\n'),
      );
      return file;
    }
    const sumsOf = (release: OriginRelease) => createHash('sha256').update(release.sums).digest('hex');
    const approval = (version: string, sums: string, key = keyIdOf('signer')) => [
      `  - version: ${version}`,
      `    sha256sums: "${sums}"`,
      `    key: ${key}`,
      '    by: alice',
      '    at: "2026-11-27T09:00:00Z"',
      '    reason: reviewed',
    ];

    it('a cooldown holds the newer versions, named with the rule and the date they become eligible', async () => {
      const { e, releases } = await world();
      const root = configurations(e, releases);
      policy(e, root, 'min-age: 7d');
      const result = await upgrade(e, root, 'a', '--policy', 'policy.yaml', '--json');
      expect(result.exitCode, result.stderr).toBe(0);
      const doc = JSON.parse(result.stdout) as {
        blocks: { to: string; held: { version: string; rule?: string; eligibleAt?: string }[] }[];
        verified: { version: string; policy?: string }[];
      };
      expect(doc.blocks[0]!.to).toBe('1.3.0');
      const cooled = doc.blocks[0]!.held.find((h) => h.version === '1.4.0');
      expect(cooled).toEqual(
        expect.objectContaining({ rule: 'version-in-cooldown', eligibleAt: expect.any(String) as string }),
      );
      const eligible = Date.parse(cooled!.eligibleAt!);
      expect(Math.abs(eligible - (Date.now() + 5 * DAY))).toBeLessThan(60_000);
      expect(doc.verified).toEqual([
        expect.objectContaining({ version: '1.3.0', policy: expect.stringContaining('min-age') as string }),
      ]);
    });

    it('approval: required moves only to an approved version, bound to its SHA256SUMS', async () => {
      const { e, releases } = await world();
      const root = configurations(e, releases);
      policy(
        e,
        root,
        'approval: required',
        'approvals:',
        ...approval('1.3.0', sumsOf(releases.get('1.3.0')!)),
      );
      const result = await upgrade(e, root, 'a', '--policy', 'policy.yaml');
      expect(result.exitCode, result.stderr).toBe(0);
      expect((await exampleBlock(e, path.join(root, 'a', '.terraform.lock.hcl'))).version).toBe('1.3.0');
      expect(result.stdout).toContain('1.4.0 not taken: held by the policy (version-not-approved)');
    });

    it('an approval for other bytes, or a version signed by a key the policy does not pin: exit 3, nothing written', async () => {
      for (const lines of [
        ['approval: required', 'approvals:', ...approval('1.4.0', 'f'.repeat(64))],
        [`keys: [${keyIdOf('other')}]`],
      ]) {
        const { e, releases } = await world();
        const root = configurations(e, releases);
        const before = fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8');
        policy(e, root, ...lines);
        const result = await upgrade(e, root, 'a', '--policy', 'policy.yaml', '--json');
        expect(result.exitCode, result.stderr).toBe(3);
        const doc = JSON.parse(result.stdout) as { failed: { version: string; message: string }[] };
        expect(doc.failed).toEqual([
          {
            address: addressOf(e),
            version: '1.4.0',
            message: expect.stringMatching(
              /refused by the policy \((approval-does-not-match|key-not-allowed)\)/,
            ) as string,
          },
        ]);
        expect(fs.readFileSync(path.join(root, 'a', '.terraform.lock.hcl'), 'utf8')).toBe(before);
      }
    });

    it('a block spelled localterraform.com is held to the rules of the registry host, and the other way round', async () => {
      const { e, releases } = await world();
      const root = configurations(e, releases);
      // a names the provider by the platform's generic hostname; c/deep by the registry's host.
      const aFile = path.join(root, 'a', '.terraform.lock.hcl');
      fs.writeFileSync(
        aFile,
        fs.readFileSync(aFile, 'utf8').replace(addressOf(e), `localterraform.com/${e.organization}/example`),
      );
      const texts = () =>
        ['a', path.join('c', 'deep')].map((d) =>
          fs.readFileSync(path.join(root, d, '.terraform.lock.hcl'), 'utf8'),
        );
      const before = texts();
      policy(e, root, `keys: [${keyIdOf('other')}]`);
      const pinned = await upgrade(e, root, 'a', path.join('c', 'deep'), '--policy', 'policy.yaml');
      expect(pinned.exitCode, pinned.stdout).toBe(3);
      expect(pinned.stderr + pinned.stdout).toContain('key-not-allowed');
      expect(texts()).toEqual(before);
      // A pattern written with the generic hostname holds the host's spelling too.
      fs.writeFileSync(
        path.join(root, 'policy.yaml'),
        [
          'providers:',
          `  "localterraform.com/${e.organization}/*":`,
          `    keys: [${keyIdOf('other')}]`,
          '',
        ].join('\n'),
      );
      const aliased = await upgrade(e, root, path.join('c', 'deep'), '--policy', 'policy.yaml');
      expect(aliased.exitCode, aliased.stdout).toBe(3);
      expect(texts()).toEqual(before);
    });

    it('the configuration file names the policy when --policy does not', async () => {
      const { e, releases } = await world();
      const root = configurations(e, releases);
      fs.mkdirSync(path.join(root, 'settings'));
      policy(e, path.join(root, 'settings'), 'min-age: 7d');
      fs.writeFileSync(
        path.join(root, '.providerrc.json'),
        JSON.stringify({ policy: 'settings/policy.yaml' }),
      );
      const result = await upgrade(e, root, 'a', '--json');
      expect(result.exitCode, result.stderr).toBe(0);
      const doc = JSON.parse(result.stdout) as { blocks: { to: string }[] };
      expect(doc.blocks[0]!.to).toBe('1.3.0');
    });

    it('a policy file with an unknown rule: exit 2 naming its line, before any request', async () => {
      const { e, releases } = await world();
      const root = configurations(e, releases);
      policy(e, root, 'min-age: 7d', 'cool-down: 3d');
      const seeded = e.requestLog.records.length;
      const result = await upgrade(e, root, 'a', '--policy', 'policy.yaml');
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(
        `Invalid policy file policy.yaml: line 4: providers.${addressOf(e)}: unknown field cool-down`,
      );
      expect(e.requestLog.records.length).toBe(seeded);
    });
  });
});
