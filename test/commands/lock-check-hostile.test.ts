/**
 * `provider lock check` given files made to hurt it (issue 43, items 14 and 15): a lock file with an escape of no
 * Unicode character or a line of megabytes, and a policy file that is a YAML alias bomb, are exit 2 naming the
 * file (and the line), with no request made; control characters in a provider's address reach no output raw.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
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
    ['a line of 7 MiB', `provider "a/b/c" {\n  version = "${'1'.repeat(7 * 1024 * 1024)}"\n}\n`, 5],
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
