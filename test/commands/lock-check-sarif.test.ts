/**
 * The SARIF of `provider lock check --format sarif` as GitHub code scanning ingests it, checked by Microsoft's SARIF
 * Multitool (npm `@microsoft/sarif-multitool`, the .NET tool built for each platform; no .NET runtime needed):
 * `validate --rule-kind "Sarif;Gh"` runs the SARIF rules and GitHub's ingestion rules (GH…, e.g. GH2012: every
 * rule has a `fullDescription` and a `help`). Any error or warning it reports fails the test, with its message.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { packageVersion } from '../../src/packageFiles.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { ADDRESS, FIXTURE_BLOCK, HEADER, NEVER_SERVED, PUBLIC_BLOCK } from '../lockfile/helpers.js';
import { FIXTURE_H1 } from '../release/helpers.js';
import { cli, publishAll } from './helpers.js';

const start = emulatorPerTest();

/** The multitool's executable for this platform (the package's main module names it). */
const MULTITOOL = createRequire(import.meta.url)('@microsoft/sarif-multitool') as string;

/** What the multitool found wrong: `<rule> <level> <where>: <message>` for each error and warning. */
async function multitool(sarifFile: string): Promise<string[]> {
  const log = path.join(path.dirname(sarifFile), 'validation.sarif');
  await promisify(execFile)(MULTITOOL, ['validate', '--rule-kind', 'Sarif;Gh', '-o', log, sarifFile], {
    // Invariant globalization: a self-contained .NET program otherwise needs the system's ICU library (libicu),
    // which a slim machine may lack; validation reads no culture-specific data.
    env: {
      PATH: process.env.PATH,
      HOME: path.dirname(sarifFile),
      DOTNET_CLI_TELEMETRY_OPTOUT: '1',
      DOTNET_SYSTEM_GLOBALIZATION_INVARIANT: '1',
    },
  });
  const validation = JSON.parse(fs.readFileSync(log, 'utf8')) as {
    runs: {
      tool: { driver: { rules: { id: string; messageStrings: Record<string, { text: string }> }[] } };
      results?: { ruleId: string; level?: string; message: { id: string; arguments?: string[] } }[];
    }[];
  };
  const [run] = validation.runs;
  return (run?.results ?? [])
    .filter((r) => ['error', 'warning', undefined].includes(r.level))
    .map((r) => {
      const rule = run!.tool.driver.rules.find((d) => d.id === r.ruleId);
      const template = rule?.messageStrings[r.message.id]?.text ?? r.message.id;
      const args = r.message.arguments ?? [];
      const text = template.replace(/\{(\d+)\}/g, (_, n: string) => args[Number(n)] ?? '');
      return `${r.ruleId} ${r.level ?? 'warning'}: ${text}`;
    });
}

/** A configuration folder `infra` under a fresh working directory, its lock file holding `blocks`. */
function configuration(emulator: Emulator, ...blocks: string[]): string {
  const cwd = tempRoot('project');
  const address = `${new URL(emulator.url).host}/${emulator.organization}/example`.toLowerCase();
  fs.mkdirSync(path.join(cwd, 'infra'));
  const text = blocks.map((b) => b.replace(ADDRESS, address)).join('\n\n');
  fs.writeFileSync(path.join(cwd, 'infra', '.terraform.lock.hcl'), `${HEADER}${text}\n`);
  return cwd;
}

describe('provider lock check --format sarif, as GitHub code scanning ingests it', () => {
  it('passes the SARIF Multitool (Sarif and Gh rules) with findings of several rules', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const block = FIXTURE_BLOCK.replace(FIXTURE_H1.linux_amd64, NEVER_SERVED);
    const cwd = configuration(emulator, block, PUBLIC_BLOCK);
    fs.writeFileSync(
      path.join(cwd, 'policy.yaml'),
      `providers:\n  "*/${emulator.organization}/example": { versions: "~> 2.0" }\n`,
    );
    const argv = ['lock', 'check', 'infra', '--format', 'sarif', '--output', 'lock.sarif'];
    const result = await cli(emulator, [...argv, '--policy', 'policy.yaml'], { cwd });
    expect(result.exitCode, result.stderr).toBe(3);
    const file = path.join(cwd, 'lock.sarif');
    const sarif = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      runs: { tool: { driver: { version?: string } }; results: { ruleId: string }[] }[];
    };
    expect(sarif.runs[0]!.results.map((r) => r.ruleId).sort()).toEqual([
      'hash-not-served',
      'platform-hash-missing',
      'provider-not-allowed',
      'version-not-allowed',
    ]);
    expect(sarif.runs[0]!.tool.driver.version).toBe(packageVersion());
    expect(await multitool(file)).toEqual([]);
  });

  it('passes it for a folder given by its absolute path (as runtask serve gives one), a file: URL', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = configuration(emulator, FIXTURE_BLOCK, PUBLIC_BLOCK);
    const dir = path.join(cwd, 'infra');
    const argv = ['lock', 'check', dir, '--format', 'sarif', '--output', 'lock.sarif'];
    const result = await cli(emulator, argv, { cwd });
    expect(result.exitCode, result.stderr).toBe(3);
    const file = path.join(cwd, 'lock.sarif');
    const sarif = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      runs: { results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[];
    };
    const uri = sarif.runs[0]!.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri;
    expect(uri).toBe(pathToFileURL(path.join(dir, '.terraform.lock.hcl')).href);
    expect(await multitool(file)).toEqual([]);
  });

  it('passes it for a missing lock file too, but for the region a file that does not exist has not', async () => {
    const emulator = await start();
    const cwd = tempRoot('project');
    fs.mkdirSync(path.join(cwd, 'infra'));
    const argv = ['lock', 'check', 'infra', '--format', 'sarif', '--output', 'lock.sarif'];
    const result = await cli(emulator, argv, { cwd });
    expect(result.exitCode, result.stderr).toBe(3);
    // SARIF2017 asks every result for a region; no line of a missing file can be named, and GitHub's own rules
    // (Gh) do not ask for one.
    expect(await multitool(path.join(cwd, 'lock.sarif'))).toEqual([
      expect.stringMatching(
        /^SARIF2017 warning: runs\[0\]\.results\[0\]\.locations\[0\]\.physicalLocation: /,
      ),
    ]);
  });
});
