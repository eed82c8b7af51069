/**
 * `provider runtask serve` as a command: flags checked before anything listens (exit 2, saying what to do),
 * the start-up line (plain or `--json`) with the chosen port, the one-time warning without an HMAC key, and
 * readable log lines on a TTY.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { anchorExec } from '../../../src/runtask/server/options.js';
import { HANDLER_COMMAND } from '../../runtask/helpers.js';
import { tempDir } from '../../helpers/tmp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});
/** Runs serve with an already-fired signal: it starts, prints, and stops at once. */
function serve(args: string[], env: Record<string, string> = {}, tty = false): ReturnType<typeof runCli> {
  const stopped = new AbortController();
  stopped.abort('SIGTERM');
  return runCli(
    ['runtask', 'serve', '--port', '0', '--state-dir', join(dir, `state-${Math.random()}`), ...args],
    {
      env,
      cwd: dir,
      signal: stopped.signal,
      tty,
    },
  );
}

describe('runtask serve flags', () => {
  it.each([
    ['no --exec', [], /needs --exec/],
    [
      'a heartbeat outside the 10-minute window',
      ['--exec', 'true', '--heartbeat', '10m'],
      /--heartbeat 10m is not inside/,
    ],
    ['a bad duration', ['--exec', 'true', '--grace', 'soon'], /--grace is not a valid duration/],
    ['a bad --max-jobs', ['--exec', 'true', '--max-jobs', '0'], /--max-jobs must be a whole number/],
    ['a bad --platform-host', ['--exec', 'true', '--platform-host', 'ftp://x'], /--platform-host/],
    ['a bad --path', ['--exec', 'true', '--path', 'hook'], /--path must start with \//],
    [
      'a missing key file',
      ['--exec', 'true', '--hmac-key-file', 'nope.key'],
      /cannot read the HMAC key file/,
    ],
    [
      '--hmac-key-env naming an unset variable',
      ['--exec', 'true', '--hmac-key-env', 'MY_KEY'],
      /MY_KEY is not set/,
    ],
  ])('%s → exit 2', async (_name, args, message) => {
    const result = await serve(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('prints where it listens, warns once without an HMAC key, and stops cleanly on the signal', async () => {
    const result = await serve(['--exec', HANDLER_COMMAND]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^provider runtask serve listening on http:\/\/127\.0\.0\.1:\d+\/\n$/);
    const events = result.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; level: string });
    expect(events.filter((e) => e.event === 'serve.unauthenticated')).toEqual([
      expect.objectContaining({ level: 'warn' }),
    ]);
    expect(events.map((e) => e.event)).toEqual([
      'serve.started',
      'serve.unauthenticated',
      'serve.stopping',
      'serve.stopped',
    ]);
  });

  it('--json prints one start-up object; a key from a file (trailing newline dropped) turns HMAC on', async () => {
    const keyFile = join(dir, 'hmac.key');
    writeFileSync(keyFile, 'file-key-123\n');
    const result = await serve([
      '--exec',
      'true',
      '--json',
      '--path',
      '/runtask',
      '--hmac-key-file',
      keyFile,
    ]);
    expect(result.exitCode).toBe(0);
    const started = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(started).toMatchObject({
      hmac: true,
      path: '/runtask',
      platformHosts: ['https://app.terraform.io'],
      maxJobs: 4,
    });
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/runtask$/);
    expect(result.stderr).not.toContain('serve.unauthenticated');
    expect(result.stderr).not.toContain('file-key-123');
  });

  it('takes the key from RUNTASK_HMAC_KEY by default and never prints it', async () => {
    const result = await serve(['--exec', 'true', '--json'], { RUNTASK_HMAC_KEY: 'env-key-456' });
    expect(JSON.parse(result.stdout)).toMatchObject({ hmac: true });
    expect(result.stderr).not.toContain('env-key-456');
  });

  it('writes readable lines, not JSON, on a TTY', async () => {
    const result = await serve(['--exec', 'true', '--no-color'], {}, true);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^\d\d:\d\d:\d\d listening on http/m);
    expect(result.stderr).toMatch(/warning: .*requests are NOT authenticated/);
    expect(result.stderr.trim().startsWith('{')).toBe(false);
  });
});

describe('--exec', () => {
  it('anchors a leading relative command path to the working directory (handlers run in a temp folder)', () => {
    expect(anchorExec('./check-plan.sh --strict', '/srv/checks')).toBe(
      "'/srv/checks/check-plan.sh' --strict",
    );
    expect(anchorExec('../bin/check', '/srv/checks')).toBe("'/srv/bin/check'");
    expect(anchorExec("./it's.sh", '/srv')).toBe("./it's.sh");
    expect(anchorExec('/usr/local/bin/check --x', '/srv')).toBe('/usr/local/bin/check --x');
    expect(anchorExec('node ./check.mjs', '/srv')).toBe('node ./check.mjs');
  });
});
