/**
 * Rendering, parsing and merging `.terraform.lock.hcl` text: the block for the fixture release is the one
 * Terraform writes (format: hashicorp/terraform: internal/depsfile/locks_file.go, `SaveLocksToBytes` and
 * `encodeHashSetTokens`), the chosen HCL parser (tree-sitter's HCL grammar) reads it back, and a merge changes
 * the provider's block and nothing else. Merge rules: hashicorp/terraform: internal/providercache/installer.go
 * (prior hashes kept only "if lock.Version() == version").
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { mergeLock, compareAddresses } from '../../src/lockfile/merge.js';
import { LockFileError, parseLockFile, readProviderBlock, findProvider } from '../../src/lockfile/parse.js';
import { hclString, renderLockFile, renderProviderBlock } from '../../src/lockfile/render.js';
import { entryHashes } from '../../src/lockfile/source.js';
import { lineDiff } from '../../src/lockfile/diff.js';
import { FIXTURE_H1 } from '../release/helpers.js';
import {
  ADDRESS,
  FIXTURE_BLOCK,
  FIXTURE_LOCK_FILE,
  HEADER,
  MAC_INIT_LOCK_FILE,
  ZH_LINES,
  fixtureMaterial,
} from './helpers.js';

const FILE = '.terraform.lock.hcl';
const ALL = entryHashes(fixtureMaterial(), undefined);

/** Two other providers, with comments, blank lines, tabs and single-line lists: valid HCL Terraform reads. */
const OTHERS = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

// the platform team pins aws
# (see ticket 42)
provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.13.0"
  constraints = "5.13.0"
  hashes = [
    "h1:DdmY4NUNU6J+Rls2Tsvs+P56tpZLOz/BMpcikMulTPo=", # linux
    "zh:272a35cf751dcac35ccd512d5d024c1bee132e0e2ff1ee4ce2ae1f58fa4a7e7c",
  ]
}



provider   "registry.terraform.io/hashicorp/random"    {
\tversion =    "3.6.0"   /* tabs, and a comment */
  hashes = [ "h1:xyz0000000000000000000000000000000000000000=", "zh:abc" ]
}
`;

describe('the block written for the fixture release', () => {
  it('is what terraform providers lock writes for all five platforms', () => {
    expect(renderProviderBlock({ address: ADDRESS, version: '1.2.3', hashes: ALL })).toBe(FIXTURE_BLOCK);
    expect(renderLockFile({ address: ADDRESS, version: '1.2.3', hashes: ALL })).toBe(FIXTURE_LOCK_FILE);
  });

  it('parses with the chosen HCL parser into the same entry', async () => {
    const parsed = await parseLockFile(FIXTURE_LOCK_FILE, FILE);
    expect(parsed.providers.map((p) => p.label)).toEqual([ADDRESS]);
    expect(readProviderBlock(parsed.providers[0]!, FILE)).toEqual({
      version: '1.2.3',
      constraints: undefined,
      hashes: ALL,
      line: 4,
    });
    expect(FIXTURE_LOCK_FILE.slice(parsed.providers[0]!.start, parsed.providers[0]!.end)).toBe(FIXTURE_BLOCK);
  });

  it('aligns version and constraints on "=" as hclwrite does, and hashes stay unaligned', async () => {
    const block = renderProviderBlock({
      address: ADDRESS,
      version: '1.2.3',
      constraints: '~> 1.2',
      hashes: ALL,
    });
    expect(block.split('\n').slice(0, 4)).toEqual([
      `provider "${ADDRESS}" {`,
      '  version     = "1.2.3"',
      '  constraints = "~> 1.2"',
      '  hashes = [',
    ]);
    const parsed = await parseLockFile(`${HEADER}${block}\n`, FILE);
    expect(readProviderBlock(parsed.providers[0]!, FILE).constraints).toBe('~> 1.2');
  });

  it('--platform keeps the h1: of the chosen platforms and every zh:', () => {
    const hashes = entryHashes(fixtureMaterial(), ['linux_amd64', 'darwin_arm64']);
    expect(hashes).toEqual(
      [FIXTURE_H1.linux_amd64, FIXTURE_H1.darwin_arm64]
        .sort()
        .concat(ZH_LINES.map((l) => l.trim().slice(1, -2))),
    );
    expect(() => entryHashes(fixtureMaterial(), ['freebsd_amd64'])).toThrow(
      /example 1\.2\.3 has no package for freebsd_amd64/,
    );
  });

  it('quotes strings as hclwrite does: escapes and doubled template introducers', async () => {
    expect(hclString('a"b\\c\nd${x}%{y}$z')).toBe('"a\\"b\\\\c\\nd$${x}%%{y}$z"');
    const parsed = await parseLockFile(
      `provider "a/b/c" {\n  version     = "1"\n  constraints = ${hclString('a"b\\c\nd${x}')}\n}\n`,
      FILE,
    );
    expect(readProviderBlock(parsed.providers[0]!, FILE).constraints).toBe('a"b\\c\nd${x}');
  });
});

describe('merging into a lock file holding two other providers', () => {
  it('inserts the block in address order, above the comments attached to the next block, and nothing else changes', async () => {
    const parsed = await parseLockFile(OTHERS, FILE);
    const result = mergeLock(parsed, { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE);
    expect(result.outcome).toBe('updated');
    // app.terraform.io sorts before registry.terraform.io: it goes first, above "// the platform team…".
    const at = OTHERS.indexOf('// the platform team');
    expect(result.text).toBe(OTHERS.slice(0, at) + FIXTURE_BLOCK + '\n\n' + OTHERS.slice(at));
    const again = await parseLockFile(result.text, FILE);
    expect(again.providers.map((p) => p.label)).toEqual([
      ADDRESS,
      'registry.terraform.io/hashicorp/aws',
      'registry.terraform.io/hashicorp/random',
    ]);
    for (const [i, before] of parsed.providers.entries()) {
      const after = again.providers[i + 1]!;
      expect(result.text.slice(after.start, after.end)).toBe(OTHERS.slice(before.start, before.end));
    }
  });

  it('appends a provider that sorts last after one blank line, keeping the file as it was before it', async () => {
    const parsed = await parseLockFile(OTHERS, FILE);
    const address = 'tfe.example.com/acme/example';
    const result = mergeLock(parsed, { address, version: '1.2.3', hashes: ALL }, FILE);
    const block = renderProviderBlock({ address, version: '1.2.3', hashes: ALL });
    expect(result.text).toBe(`${OTHERS}\n${block}\n`);
    // A file without a final newline gets one, then the blank line.
    const bare = OTHERS.trimEnd();
    const merged = mergeLock(
      await parseLockFile(bare, FILE),
      { address, version: '1.2.3', hashes: ALL },
      FILE,
    );
    expect(merged.text).toBe(`${bare}\n\n${block}\n`);
  });

  it('replaces the block of the same provider in place; the text before and after it is unchanged', async () => {
    const withOld = OTHERS.replace(
      '\n\n\n\nprovider   "registry',
      `\n\nprovider "${ADDRESS.toUpperCase()}" {\n  version = "1.2.2"\n  constraints = ">= 1.0.0"\n  hashes = ["h1:old=", "zh:old"]\n}\n\nprovider   "registry`,
    );
    const parsed = await parseLockFile(withOld, FILE);
    const old = findProvider(parsed, ADDRESS)[0]!;
    const result = mergeLock(parsed, { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE);
    // Another version: the entry starts afresh (old hashes gone); constraints come from the configuration: kept.
    const block = renderProviderBlock({
      address: ADDRESS,
      version: '1.2.3',
      constraints: '>= 1.0.0',
      hashes: ALL,
    });
    expect(result.text).toBe(withOld.slice(0, old.start) + block + withOld.slice(old.end));
    expect(result.previous?.entry.version).toBe('1.2.2');
    expect(result.lock.hashes).not.toContain('h1:old=');
  });

  it('for the version already locked, keeps the hashes recorded before and adds the new ones', async () => {
    const parsed = await parseLockFile(
      MAC_INIT_LOCK_FILE.replace('"h1:Mkae', '"h1:kept-from-before=",\n    "h1:Mkae'),
      FILE,
    );
    const result = mergeLock(parsed, { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE);
    expect(result.lock.hashes).toEqual([...ALL.slice(0, 5), 'h1:kept-from-before=', ...ALL.slice(5)].sort());
    expect(result.lock.constraints).toBe('~> 1.2');
  });

  it('turns the lock file terraform init wrote on a Mac into one every platform accepts (the README example)', async () => {
    const result = mergeLock(
      await parseLockFile(MAC_INIT_LOCK_FILE, FILE),
      { address: ADDRESS, version: '1.2.3', hashes: ALL },
      FILE,
    );
    expect(result.text).toBe(
      FIXTURE_LOCK_FILE.replace('  version = "1.2.3"', '  version     = "1.2.3"\n  constraints = "~> 1.2"'),
    );
    expect(lineDiff(result.previous!.block, result.block).filter((l) => !l.startsWith('  '))).toEqual([
      '+     "h1:8R6Zp2qy/MaNGZAYNr59B5gMtYMlKr4toFGKCZxjoiw=",',
      '+     "h1:YKpnBdIzIPiMhkHaGgJKj0ZLBi+s7i8Y29dA3MOAKao=",',
      '+     "h1:gt027XmP27ybr+Et7u9SiQ0/9VU8wN6sC62QfvTxtEY=",',
      '+     "h1:s5DjVaODHLaOuYq2F66YKvmnBTgM8fC0ZygmgbhLe7s=",',
    ]);
  });

  it('is unchanged, byte for byte, when the file already records the entry', async () => {
    const result = mergeLock(
      await parseLockFile(FIXTURE_LOCK_FILE, FILE),
      { address: ADDRESS, version: '1.2.3', hashes: ALL },
      FILE,
    );
    expect(result.outcome).toBe('unchanged');
    expect(result.text).toBe(FIXTURE_LOCK_FILE);
  });

  it("--constraints replaces the block's constraints", async () => {
    const result = mergeLock(
      await parseLockFile(MAC_INIT_LOCK_FILE, FILE),
      { address: ADDRESS, version: '1.2.3', hashes: ALL, constraints: '>= 1.2.0, < 2.0.0' },
      FILE,
    );
    expect(result.block).toContain('  constraints = ">= 1.2.0, < 2.0.0"\n');
  });

  it('keeps Windows line endings in a file written with them', async () => {
    const crlf = OTHERS.replace(/\n/g, '\r\n');
    const result = mergeLock(
      await parseLockFile(crlf, FILE),
      { address: 'zz.example/a/b', version: '1.2.3', hashes: ALL },
      FILE,
    );
    expect(result.text.startsWith(crlf)).toBe(true);
    expect(result.text.slice(crlf.length)).toBe(
      `\r\n${renderProviderBlock({ address: 'zz.example/a/b', version: '1.2.3', hashes: ALL }, '\r\n')}\r\n`,
    );
    expect(result.text.replace(/\r\n/g, '')).not.toContain('\n');
  });

  it('writes a new file with the header when there is none, or it is empty', async () => {
    expect(mergeLock(undefined, { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE)).toMatchObject({
      outcome: 'created',
      text: FIXTURE_LOCK_FILE,
    });
    expect(
      mergeLock(await parseLockFile('\n', FILE), { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE)
        .text,
    ).toBe(FIXTURE_LOCK_FILE);
  });

  it('orders addresses as Terraform does: hostname, then namespace, then type', () => {
    expect(compareAddresses('app.terraform.io/z/a', 'registry.terraform.io/a/a')).toBeLessThan(0);
    expect(
      compareAddresses('registry.terraform.io/hashicorp/aws', 'registry.terraform.io/hashicorp-x/aaa'),
    ).toBeLessThan(0);
    expect(compareAddresses('A/B/C', 'a/b/c')).toBe(0);
  });
});

describe('a lock file that cannot be updated is a usage error naming the file and line', () => {
  it.each([
    ['an unclosed block', `${HEADER}provider "a/b/c" {\n  version = "1"\n`, 4],
    ['a missing value', `${HEADER}provider "a/b/c" {\n  version = \n}\n`, 5],
    ['an unterminated string', `${HEADER}provider "a/b/c" {\n  version = "1\n}\n`, 5],
  ])('%s', async (_, text, line) => {
    const error = await parseLockFile(text, FILE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockFileError);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(
      new RegExp(`^\\.terraform\\.lock\\.hcl:${line}: .*not valid HCL`),
    );
  });

  it.each([
    [
      'an interpolated version',
      `provider "${ADDRESS}" {\n  version = "\${var.v}"\n}\n`,
      2,
      'version must be a quoted string',
    ],
    [
      'hashes that are not a list',
      `provider "${ADDRESS}" {\n  version = "1"\n  hashes = "h1:x"\n}\n`,
      3,
      'hashes must be a list',
    ],
    [
      'an unknown argument',
      `provider "${ADDRESS}" {\n  version = "1"\n  source = "x"\n}\n`,
      3,
      'unsupported argument "source"',
    ],
    ['a block without version', `\n\nprovider "${ADDRESS}" {\n}\n`, 3, 'has no version'],
    [
      'two blocks of the provider',
      `provider "${ADDRESS}" {\n  version = "1"\n}\n\nprovider "${ADDRESS}" {\n  version = "1"\n}\n`,
      5,
      'has a second block (first on line 1)',
    ],
  ])("%s in the provider's own block", async (_, text, line, problem) => {
    const parsed = await parseLockFile(text, FILE);
    expect(() => mergeLock(parsed, { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE)).toThrow(
      `${FILE}:${line}: `,
    );
    expect(() => mergeLock(parsed, { address: ADDRESS, version: '1.2.3', hashes: ALL }, FILE)).toThrow(
      problem,
    );
  });

  it("other providers' blocks are not judged: they are kept as they are", async () => {
    const text = `provider "registry.terraform.io/x/y" {\n  version = "\${odd}"\n  whatever = 1\n}\n`;
    const result = mergeLock(
      await parseLockFile(text, FILE),
      { address: ADDRESS, version: '1.2.3', hashes: ALL },
      FILE,
    );
    expect(result.text.startsWith(FIXTURE_BLOCK)).toBe(true);
    expect(result.text.endsWith(text)).toBe(true);
  });
});
