/**
 * `provider lock check` given files made to hurt it (issue 43, items 14 and 15): a lock file with an escape of no
 * Unicode character or an overlong line, and a policy file that is a YAML alias bomb, are exit 2 naming the
 * file (and the line), with no request made; control characters in a provider's address reach no output raw.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJunit } from '../../src/runtask/formats/junit.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempRoot } from '../helpers/tmp.js';
import { HEADER } from '../lockfile/helpers.js';
import { cli } from './helpers.js';

const start = emulatorPerTest();

/** A configuration folder `infra` under a fresh working directory, its lock file holding `text` after the header. */
function configuration(text: string): string {
  const cwd = tempRoot('project');
  fs.mkdirSync(path.join(cwd, 'infra'));
  fs.writeFileSync(path.join(cwd, 'infra', '.terraform.lock.hcl'), `${HEADER}${text}`);
  return cwd;
}

const LOCK_FILE = path.join('infra', '.terraform.lock.hcl');

describe('provider lock check, given files made to hurt it', () => {
  it.each([
    ['an escape of no Unicode character', 'provider "a/b/c" {\n  version = "\\UFFFFFFFF"\n}\n', 5],
    ['a line of 100 000 characters', `provider "a/b/c" {\n  version = "${'1'.repeat(100_000)}"\n}\n`, 5],
  ])('%s in the lock file is exit 2 naming the file and line, nothing asked', async (_, text, line) => {
    const emulator = await start();
    const cwd = configuration(text);
    const result = await cli(emulator, ['lock', 'check', 'infra'], { cwd });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(`${LOCK_FILE}:${line}: `);
    expect(result.stderr).not.toContain('This is a bug');
    expect(emulator.requestLog.records).toEqual([]);
  });

  it('provider lock refuses such an address, exit 2, and leaves the file as it was', async () => {
    const cwd = configuration('provider "a/b/\\U00110000" {\n  version = "1.0.0"\n}\n');
    const before = fs.readFileSync(path.join(cwd, LOCK_FILE), 'utf8');
    const key = path.join(REPO_ROOT, 'fixtures', 'keys', 'signer.pub.asc');
    const release = path.join(REPO_ROOT, 'fixtures', 'release');
    const argv = ['lock', release, '--key', key, '--organization', 'example-org', '--lock-file', LOCK_FILE];
    const result = await runCli(argv, { cwd });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `${LOCK_FILE}:4: the escape \\U00110000 is not a Unicode character: this is not valid HCL`,
    );
    expect(fs.readFileSync(path.join(cwd, LOCK_FILE), 'utf8')).toBe(before);
  });

  it('a policy file that is a YAML alias bomb is exit 2 naming it, nothing asked', async () => {
    const emulator = await start();
    const cwd = configuration('');
    // A billion "x" once expanded: each level's list holds ten of the level below.
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      levels.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    fs.writeFileSync(path.join(cwd, 'policy.yaml'), `${levels.join('\n')}\nallow: *a9\n`);
    const result = await cli(emulator, ['lock', 'check', 'infra', '--policy', 'policy.yaml'], { cwd });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain('Invalid policy file policy.yaml: ');
    expect(result.stderr).toContain('alias');
    expect(emulator.requestLog.records).toEqual([]);
  });
});

/** A lock file's provider blocks whose addresses hold control characters: HCL escapes, then raw characters. */
const CONTROLLED = [
  'provider "evil.example/t\\u001b]0;pwned\\u0007/x\\u0000y" {\n  version = "1.0.0"\n}\n',
  'provider "raw.example/a\u001b[2Jb/c\u007f\u009b\r\t\uffff" {\n  version = "1.0.0"\n}\n',
].join('\n');

/** The addresses as decoded, lower-cased as the check reports them. */
const ADDRESSES = [
  'evil.example/t\u001b]0;pwned\u0007/x\u0000y',
  'raw.example/a\u001b[2jb/c\u007f\u009b\r\t\uffff',
];

/** The same, each control character written as the outputs write it. */
const SHOWN = [
  'evil.example/t\\u001b]0;pwned\\u0007/x\\u0000y',
  'raw.example/a\\u001b[2jb/c\\u007f\\u009b\\u000d\\u0009\uffff',
];

/** The control characters (C0, DEL, C1) in `text` but its line breaks. */
function controls(text: string): string[] {
  return [...text.replace(/\n/g, '')].filter((c) => /\p{Cc}/u.test(c));
}

/** What XML 1.0 cannot hold, raw or as a character reference (the Char production, §2.2), found in `xml`. */
function notXmlChars(xml: string): string[] {
  const char = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]$/u;
  const referenced = [...xml.matchAll(/&#(x[0-9a-fA-F]+|[0-9]+);/g)].map((m) =>
    String.fromCodePoint(m[1]!.startsWith('x') ? parseInt(m[1]!.slice(1), 16) : Number(m[1])),
  );
  return [...xml, ...referenced].filter((c) => !char.test(c));
}

describe('provider lock check, given provider addresses holding control characters', () => {
  it('prints them visibly in the text, raw nowhere', async () => {
    const emulator = await start();
    const cwd = configuration(CONTROLLED);
    const result = await cli(emulator, ['lock', 'check', 'infra'], { cwd });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(controls(result.stdout + result.stderr)).toEqual([]);
    for (const shown of SHOWN)
      expect(result.stdout).toContain(`${shown} is not a provider of the private registry`);
  });

  it('writes well-formed JUnit XML, the characters written visibly, on stdout and in --output', async () => {
    const emulator = await start();
    const cwd = configuration(CONTROLLED);
    const result = await cli(emulator, ['lock', 'check', 'infra', '--format', 'junit'], { cwd });
    expect(result.exitCode, result.stderr).toBe(3);
    const written = await cli(
      emulator,
      ['lock', 'check', 'infra', '--format', 'junit', '--output', 'x.xml'],
      {
        cwd,
      },
    );
    expect(written.exitCode, written.stderr).toBe(3);
    const file = fs.readFileSync(path.join(cwd, 'x.xml'), 'utf8');
    for (const xml of [result.stdout, file]) {
      expect(notXmlChars(xml)).toEqual([]);
      expect(controls(xml)).toEqual([]);
      const junit = readJunit(xml);
      expect(junit.findings.map((f) => f.message).join('\n')).toContain(SHOWN[0]);
    }
    expect(controls(written.stdout + written.stderr)).toEqual([]);
  });

  it('keeps the addresses exact in --json and SARIF properties, JSON-escaped, and their messages visible', async () => {
    const emulator = await start();
    const cwd = configuration(CONTROLLED);
    const json = await cli(emulator, ['lock', 'check', 'infra', '--json'], { cwd });
    expect(json.exitCode, json.stderr).toBe(3);
    expect(controls(json.stdout)).toEqual([]);
    const document = JSON.parse(json.stdout) as {
      providers: { address: string }[];
      findings: { provider: string; message: string }[];
    };
    expect(document.providers.map((p) => p.address)).toEqual(ADDRESSES);
    expect(document.findings.map((f) => f.provider)).toEqual(ADDRESSES);
    expect(document.findings.map((f) => controls(f.message))).toEqual([[], []]);
    expect(document.findings[0]!.message).toContain(SHOWN[0]);

    const sarif = await cli(emulator, ['lock', 'check', 'infra', '--format', 'sarif'], { cwd });
    expect(sarif.exitCode, sarif.stderr).toBe(3);
    expect(controls(sarif.stdout)).toEqual([]);
    const log = JSON.parse(sarif.stdout) as {
      runs: { results: { message: { text: string }; properties: { provider: string } }[] }[];
    };
    const results = log.runs[0]!.results;
    expect(results.map((r) => r.properties.provider)).toEqual(ADDRESSES);
    expect(results.map((r) => controls(r.message.text))).toEqual([[], []]);
    expect(results[1]!.message.text).toContain(SHOWN[1]);
    const argv = ['lock', 'check', 'infra', '--format', 'sarif', '--output', 'x.sarif'];
    const written = await cli(emulator, argv, { cwd });
    expect(written.exitCode, written.stderr).toBe(3);
    const file = fs.readFileSync(path.join(cwd, 'x.sarif'), 'utf8');
    expect(controls(file)).toEqual([]);
    expect(JSON.parse(file)).toEqual(log);
  });

  it('names such an address visibly in an error (exit 2)', async () => {
    const emulator = await start();
    const cwd = configuration('provider "a/b/\\u001b[2Jc" {\n}\n');
    const result = await cli(emulator, ['lock', 'check', 'infra'], { cwd });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${LOCK_FILE}:4: the block of a/b/\\u001b[2Jc has no version`);
    expect(controls(result.stderr)).toEqual([]);
  });
});
