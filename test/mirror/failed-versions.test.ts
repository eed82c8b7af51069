/**
 * A run with a failed version never ends with exit 0, and its `--json` error document holds the report with each
 * version's error. An origin whose versions list has no `platforms` (the protocol only recommends them) is asked
 * for the platforms the run names, one download document each; without any named, each version fails, saying so.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';
import { hostDir, startTwoVersionOrigin, type TestOrigin } from './origin.js';

const origin = startTwoVersionOrigin;

async function mirror(o: TestOrigin, cwd: string, ...args: string[]) {
  return runCli(
    [
      'mirror',
      'acme/example',
      '--from',
      o.url,
      '--to-dir',
      'out',
      '--versions',
      '>= 1.0.0',
      '--json',
      ...args,
    ],
    { cwd, homeDir: cwd, env: { NO_COLOR: '1', PROVIDER_RETRY_DELAY: '2ms' } },
  );
}

interface ErrorDoc {
  error: {
    code: string;
    message: string;
    details: {
      report: {
        summary: Record<string, number>;
        providers: {
          versions: {
            version: string;
            status: string;
            platforms: string[];
            error: { message: string } | null;
          }[];
        }[];
      };
    };
  };
}

describe('provider mirror: failed versions', () => {
  it('none of the platforms asked for published: exit 3, each version’s error in the --json report', async () => {
    const o = await origin();
    const cwd = tempRoot();
    const result = await mirror(o, cwd, '--platforms', 'freebsd_arm64');
    expect(result.exitCode, result.stdout).toBe(3);
    const doc = JSON.parse(result.stdout) as ErrorDoc;
    expect(doc.error.code).toBe('verification');
    expect(doc.error.message).toMatch(/^2 failed and nothing of them was written/);
    expect(doc.error.details.report.summary).toMatchObject({ failed: 2, mirrored: 0 });
    expect(doc.error.details.report.providers[0]!.versions.map((v) => [v.version, v.error?.message])).toEqual(
      [
        ['1.0.0', 'acme/example 1.0.0: none of the platforms asked for is published'],
        ['1.1.0', 'acme/example 1.1.0: none of the platforms asked for is published'],
      ],
    );
  });

  it('a versions list without platforms: the platforms named are asked of the download endpoint', async () => {
    const o = await origin({ noPlatformsListed: true });
    const cwd = tempRoot();
    const result = await mirror(o, cwd, '--platforms', 'linux_amd64,darwin_arm64');
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      providers: {
        versions: { version: string; status: string; platforms: string[]; unavailable: string[] }[];
      }[];
    };
    expect(doc.providers[0]!.versions.map((v) => [v.version, v.status, v.platforms, v.unavailable])).toEqual([
      ['1.0.0', 'mirrored', ['darwin_arm64', 'linux_amd64'], []],
      ['1.1.0', 'mirrored', ['linux_amd64'], ['darwin_arm64']],
    ]);
    const dir = path.join(cwd, 'out', hostDir(o.url), 'acme', 'example');
    expect(fs.readdirSync(dir).sort()).toEqual(['1.0.0', '1.1.0']);
    // It listed nothing: the warning does not say it listed what it does not serve.
    expect(result.stderr).toMatch(
      /acme\/example 1\.1\.0: 127\.0\.0\.1:\d+ serves no download for darwin_arm64 \(skipped\)/,
    );
    expect(result.stderr).not.toMatch(/lists darwin_arm64/);
  });

  it('a versions list without platforms, and none named: each version fails with exit 2, saying what to give', async () => {
    const o = await origin({ noPlatformsListed: true });
    const cwd = tempRoot();
    const result = await mirror(o, cwd);
    expect(result.exitCode, result.stdout).toBe(2);
    const doc = JSON.parse(result.stdout) as ErrorDoc;
    const versions = doc.error.details.report.providers[0]!.versions;
    expect(versions.map((v) => v.status)).toEqual(['failed', 'failed']);
    expect(versions[0]!.error!.message).toMatch(
      /^acme\/example 1\.0\.0: 127\.0\.0\.1:\d+ lists no platforms for this version, and none was asked for$/,
    );
    expect(o.requests.filter((r) => r.includes('/download/'))).toEqual([]);
    expect(fs.existsSync(path.join(cwd, 'out'))).toBe(false);
  });
});
