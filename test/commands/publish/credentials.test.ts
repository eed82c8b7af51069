/**
 * Where publish finds its token (flag > TF_TOKEN_<host> > TFE_TOKEN > credentials.tfrc.json), and that no
 * token and no archivist link ever reaches stdout, stderr, the GitHub step summary or the request log.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { runCli } from '../../helpers/cli.js';
import type { CliResult } from '../../helpers/result.js';
import { emulatorPerTest } from '../../helpers/emulator/index.js';
import { FAST, expectComplete, expectNoSecrets, publish, publishArgs } from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';

const emulator = emulatorPerTest();
const WRONG = 'wrong.atlasv1.token-that-the-emulator-refuses';

/** A temporary home whose credentials.tfrc.json holds `token` for the emulator's host. */
function homeWith(e: Emulator, token: string): string {
  const home = tempRoot();
  fs.mkdirSync(path.join(home, '.terraform.d'));
  fs.writeFileSync(
    path.join(home, '.terraform.d', 'credentials.tfrc.json'),
    JSON.stringify({ credentials: { [new URL(e.url).host]: { token } } }),
  );
  return home;
}

function run(e: Emulator, extra: string[], env: Record<string, string>, home: string): Promise<CliResult> {
  return runCli(publishArgs(e, extra), { env: { ...FAST, ...env }, cwd: tempRoot(), homeDir: home });
}

describe('provider publish credentials', () => {
  it('takes --token first, then TF_TOKEN_<host>, then TFE_TOKEN, then credentials.tfrc.json', async () => {
    const e = await emulator();
    const variable = 'TF_TOKEN_127_0_0_1';
    const cases: [string, string[], Record<string, string>, string][] = [
      ['--token', ['--token', e.ownerToken], { [variable]: WRONG, TFE_TOKEN: WRONG }, homeWith(e, WRONG)],
      [variable, [], { [variable]: e.ownerToken, TFE_TOKEN: WRONG }, homeWith(e, WRONG)],
      ['TFE_TOKEN', [], { TFE_TOKEN: e.ownerToken }, homeWith(e, WRONG)],
      ['credentials.tfrc.json', [], {}, homeWith(e, e.ownerToken)],
    ];
    for (const [source, extra, env, home] of cases) {
      const result = await run(e, extra, env, home);
      expect(result.exitCode, `${source}: ${result.stderr}`).toBe(0);
      expectNoSecrets(result.stdout + result.stderr, e, source);
      expect(result.stderr).not.toContain(WRONG);
      if (source === '--token') expect(result.stderr).toContain('--token is visible to other users');
    }
    expectComplete(e);
    // A lower source with the wrong token proves nothing: the wrong one alone is refused (exit 4).
    const refused = await run(e, [], { TFE_TOKEN: WRONG }, tempRoot());
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).not.toContain(WRONG);
  });

  it('refuses to start without a token, naming terraform login and the variable', async () => {
    const e = await emulator();
    const result = await run(e, [], {}, tempRoot());
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`terraform login ${new URL(e.url).host}`);
    expect(result.stderr).toContain('TF_TOKEN_127_0_0_1');
    expect(e.requestLog.records).toEqual([]);
  });
});

describe('provider publish keeps secrets out of every output', () => {
  it('has a scan that would catch a leak', async () => {
    const e = await emulator();
    expect(() => expectNoSecrets(`PUT ${e.url}/_archivist/v1/object/cHV0Ong.abc`, e, 'x')).toThrow();
    expect(() => expectNoSecrets(`Bearer ${e.ownerToken}`, e, 'x')).toThrow();
    expect(() => expectNoSecrets('PUT /_archivist/v1/object/[secret] 200', e, 'x')).not.toThrow();
  });

  it('prints no token and no upload or download link, verbose or not, in any file it writes', async () => {
    const dir = tempRoot();
    const requestLog = path.join(dir, 'requests.jsonl');
    const summary = path.join(dir, 'summary.md');
    const e = await emulator({
      requestLogPath: requestLog,
      faults: [
        { method: 'PUT', path: '/_archivist/**', status: 403, times: 1 },
        { method: 'PUT', path: '/_archivist/**', status: 502, times: 1 },
      ],
    });
    const gha = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary };
    const outputs: string[] = [];
    const keep = (r: CliResult): CliResult => (outputs.push(r.stdout, r.stderr), r);
    expect(keep(await publish(e, ['--verbose'], { env: gha })).exitCode).toBe(0);
    expect(keep(await publish(e, ['--verbose', '--json'], { env: gha })).exitCode).toBe(0);
    expect(keep(await publish(e, ['--dry-run'], { env: gha })).exitCode).toBe(0);
    expect(keep(await publish(e, ['--token', e.ownerToken, '--verbose'], { tty: true })).exitCode).toBe(0);
    // Failing runs print the request they failed on: still nothing secret.
    e.faults.add({ method: 'PUT', path: '/_archivist/**', status: 500 });
    for (const p of e.store.data.platforms) Object.assign(p.binary, { uploadedAt: null, flagAt: null });
    const failed = keep(await publish(e, ['--verbose'], { env: gha }));
    expect(failed.exitCode).toBe(4);
    expect(failed.stderr).toContain('::error::');

    const all = outputs.join('\n');
    expect(all).toContain('→ GET'); // --verbose traced the API calls
    expect(all).toContain('[redacted]'); // ... and the download links, redacted
    expectNoSecrets(all, e, 'stdout/stderr');
    expectNoSecrets(fs.readFileSync(summary, 'utf8'), e, 'the GitHub step summary');
    expectNoSecrets(fs.readFileSync(requestLog, 'utf8'), e, 'the request log file');
    expect(fs.readFileSync(summary, 'utf8')).toContain('| linux_amd64 |');
  });
});
