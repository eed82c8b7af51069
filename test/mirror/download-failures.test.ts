/**
 * A mirror whose origin fails it while it downloads: a zip that answers 404, a connection reset half way, a
 * `file:` or `data:` link, a SHA256SUMS or signature without end, a versions document without end, an answer that
 * stops after its headers. Each is a named failure of that version (exit 4 for the network, 3 for what cannot be
 * the file it says), with no stack trace; the other version is mirrored; what streams without end is given up at
 * its cap, and what stalls at the timeout (PROVIDER_HTTP_TIMEOUT), never a hang.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';
import { endlessSent, hostDir, startTwoVersionOrigin, type OriginFaults, type TestOrigin } from './origin.js';

/**
 * 10 s for a read: none of these tests waits for it, and a healthy read on a loaded machine never meets it. The
 * tests of what stalls are given 1 s (`STALLING`).
 */
const ENV = { NO_COLOR: '1', PROVIDER_HTTP_TIMEOUT: '10s', PROVIDER_RETRY_DELAY: '2ms' };
const STALLING = { ...ENV, PROVIDER_HTTP_TIMEOUT: '1s' };

const origin = startTwoVersionOrigin;

function mirror(o: TestOrigin, cwd: string, ...args: string[]) {
  return mirrorWith(ENV, o, cwd, ...args);
}

function mirrorWith(env: Record<string, string>, o: TestOrigin, cwd: string, ...args: string[]) {
  return runCli(
    ['mirror', 'acme/example', '--from', o.url, '--to-dir', 'out', '--versions', '>= 1.0.0', ...args],
    { cwd, homeDir: cwd, env },
  );
}

/** The version folders the run left, and anything else in the provider's folder (a temporary folder). */
function written(cwd: string, o: TestOrigin): string[] {
  const dir = path.join(cwd, 'out', hostDir(o.url), 'acme', 'example');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

const MiB = 1024 * 1024;

describe('provider mirror: a download that fails is a failure of its version', () => {
  it.each<[string, number, OriginFaults, RegExp]>([
    [
      'a zip that answers 404',
      4,
      { missingZip: '1.0.0 linux_amd64' },
      /linux_amd64\.zip on 127\.0\.0\.1:\d+ answered 404/,
    ],
    [
      'a connection reset half way',
      4,
      { resetZip: '1.0.0 linux_amd64' },
      /linux_amd64\.zip from 127\.0\.0\.1:\d+ failed: ECONNRESET/,
    ],
    [
      'a file: link',
      3,
      { downloadUrl: { at: '1.0.0 linux_amd64', url: 'file:///etc/passwd' } },
      /1\.0\.0 linux_amd64: 127\.0\.0\.1:\d+ gives a file: link for its zip; only http and https links are fetched/,
    ],
    [
      'a data: link',
      3,
      {
        downloadUrl: {
          at: '1.0.0 linux_amd64',
          url: 'data:application/zip;base64,UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==',
        },
      },
      /gives a data: link for its zip/,
    ],
    [
      'a SHA256SUMS without end',
      3,
      { endless: 'sums' as const },
      /SHA256SUMS from 127\.0\.0\.1:\d+ is larger than 1 MiB/,
    ],
    [
      'a signature without end',
      3,
      { endless: 'sig' as const },
      /SHA256SUMS signature from 127\.0\.0\.1:\d+ is larger than 64 KiB/,
    ],
    ...['file:///etc/passwd', 'data:text/plain,hello', 'ftp://127.0.0.1/x.zip'].map(
      (to) =>
        [
          `a zip link that redirects to ${to.split(':')[0]}:`,
          3,
          { redirectZip: { at: '1.0.0 linux_amd64', to } },
          new RegExp(
            `the link of terraform-provider-example_1\\.0\\.0_linux_amd64\\.zip on 127\\.0\\.0\\.1:\\d+ redirects to a ${to.split(':')[0]}: link; only http and https links are fetched`,
          ),
        ] as [string, number, OriginFaults, RegExp],
    ),
    [
      'a zip link that redirects to a UNIX socket',
      3,
      { redirectZip: { at: '1.0.0 linux_amd64', to: 'http://unix:/var/run/docker.sock:/x.zip' } },
      /linux_amd64\.zip on 127\.0\.0\.1:\d+ redirects to a UNIX socket \(http:\/\/unix:…\) link/,
    ],
    [
      'a UNIX socket link',
      3,
      { downloadUrl: { at: '1.0.0 linux_amd64', url: 'http://unix:/var/run/docker.sock:/x.zip' } },
      /gives a UNIX socket \(http:\/\/unix:…\) link for its zip; only http and https links are fetched/,
    ],
  ])('%s: exit %i naming the version, the other version mirrored', async (_what, code, faults, message) => {
    const o = await origin(faults);
    const cwd = tempRoot();
    const result = await mirror(o, cwd, '--json');
    expect(result.exitCode, result.stderr).toBe(code);
    expect(result.stderr).not.toMatch(/This is a bug|^\s+at /m);
    const doc = JSON.parse(result.stdout) as {
      error: {
        message: string;
        details: {
          report: {
            providers: {
              versions: { version: string; status: string; error: { message: string } | null }[];
            }[];
          };
        };
      };
    };
    expect(doc.error.message).toMatch(
      /One failed and nothing of it was written: 127\.0\.0\.1:\d+\/acme\/example 1\.0\.0$/,
    );
    const versions = doc.error.details.report.providers[0]!.versions;
    expect(versions.map((v) => [v.version, v.status])).toEqual([
      ['1.0.0', 'failed'],
      ['1.1.0', 'mirrored'],
    ]);
    expect(versions[0]!.error!.message).toMatch(/^acme\/example 1\.0\.0/);
    expect(versions[0]!.error!.message).toMatch(message);
    expect(written(cwd, o)).toEqual(['1.1.0']);
    if ('downloadUrl' in faults) {
      // Refused when its document was read: nothing of the version was fetched.
      expect(o.requests.filter((r) => r.includes('/1.0.0/files/'))).toEqual([]);
    }
    if ('redirectZip' in faults) {
      // Not followed, and not asked again: a redirect to such a link is no passing trouble.
      const zip = '/1.0.0/files/terraform-provider-example_1.0.0_linux_amd64.zip';
      expect(o.requests.filter((r) => r.endsWith(zip))).toHaveLength(1);
      expect(versions[0]!.error!.message).not.toContain(faults.redirectZip!.to);
    }
    if ('endless' in faults) {
      // Given up at its cap as it streamed: not read on until the memory ran out.
      expect(endlessSent.get(faults.endless!)).toBeLessThan(32 * MiB);
    }
  });

  it.each<[string, (o: TestOrigin) => OriginFaults, RegExp]>([
    [
      'a reset that retries did not cure: later',
      () => ({ resetZip: '1.0.0 linux_amd64' }),
      /^The origin did not answer, or stopped sending \(after retries\); run the same command again later/,
    ],
    [
      'an https link to a plain-HTTP port: not later, the origin’s to fix',
      (o) => ({
        downloadUrl: {
          at: '1.0.0 linux_amd64',
          url: `${o.url.replace('http:', 'https:')}/x/terraform-provider-example_1.0.0_linux_amd64.zip`,
        },
      }),
      /^The link points to https:\/\/127\.0\.0\.1:\d+, which answered in plain HTTP, not TLS: another try will not help/,
    ],
  ])('the hint of a download that got no answer says what to do: %s', async (_what, faults, hint) => {
    const o = await origin();
    Object.assign(o.faults, faults(o));
    const cwd = tempRoot();
    const result = await mirror(o, cwd, '--json');
    expect(result.exitCode, result.stderr).toBe(4);
    const doc = JSON.parse(result.stdout) as {
      error: { details: { report: { providers: { versions: { error: { hint: string } | null }[] }[] } } };
    };
    const failed = doc.error.details.report.providers[0]!.versions[0]!.error!;
    expect(failed.hint).toMatch(hint);
    expect(failed.hint).not.toMatch(/is busy/);
  });

  it('a connection reset half way once is retried: the version is mirrored', async () => {
    const o = await origin({ resetZipOnce: '1.0.0 linux_amd64' });
    const cwd = tempRoot();
    const result = await mirror(o, cwd);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(written(cwd, o)).toEqual(['1.0.0', '1.1.0']);
    const zip = '/1.0.0/files/terraform-provider-example_1.0.0_linux_amd64.zip';
    expect(o.requests.filter((r) => r.endsWith(zip))).toHaveLength(2);
  });

  it('a versions document without end is given up at 8 MiB: exit 4, nothing written', async () => {
    const o = await origin({ endless: 'versions' });
    const cwd = tempRoot();
    const result = await mirror(o, cwd);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toMatch(
      /the versions of acme\/example from 127\.0\.0\.1:\d+ is larger than a registry document \(8 MiB\)/,
    );
    expect(endlessSent.get('versions')).toBeLessThan(40 * MiB);
    expect(fs.existsSync(path.join(cwd, 'out'))).toBe(false);
  });

  it('a versions document that stalls after its headers times out (exit 4), never hangs', async () => {
    const o = await origin({ stall: 'versions' });
    const cwd = tempRoot();
    const result = await mirrorWith(STALLING, o, cwd);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toMatch(
      /could not be reached for the versions of acme\/example: ETIMEDOUT: Timeout awaiting '(socket|request)' for 1000ms/,
    );
  });

  it('a SHA256SUMS that stalls after its headers times out: that version fails (exit 4), the other is mirrored', async () => {
    const o = await origin({ stall: 'sums' });
    const cwd = tempRoot();
    const result = await mirrorWith(STALLING, o, cwd);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toMatch(
      /acme\/example 1\.0\.0: downloading SHA256SUMS from 127\.0\.0\.1:\d+ failed: ETIMEDOUT/,
    );
    expect(written(cwd, o)).toEqual(['1.1.0']);
  });
});
