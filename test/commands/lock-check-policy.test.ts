/**
 * `provider lock check --policy`: for each provider block the private registry serves, what the policy decides
 * (src/lockfile/admission.ts) with what the registry serves for the locked version: the keys its signature
 * proved, the SHA-256 of its SHA256SUMS, and its `created-at` in the registry. A version held (no approval where
 * one is required; younger than the min-age) or refused (signed by a key the policy does not pin; approved for
 * other bytes) is a finding in every format, and fails the check (exit 3) and a run task reading its SARIF. The
 * expected SHA-256 and key ids are the fixture's, read from the fixture files, not computed by src/. Every run only
 * reads the registry (GETs).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { readJunit } from '../../src/runtask/formats/junit.js';
import { readSarif } from '../../src/runtask/formats/sarif.js';
import { interpretHandlerExit } from '../../src/runtask/server/handler/handlerResult.js';
import { emulatorPerTest, keyIdOf } from '../helpers/emulator/index.js';
import type { CliResult } from '../helpers/result.js';
import { tempRoot } from '../helpers/tmp.js';
import { ADDRESS, FIXTURE_BLOCK, HEADER, PUBLIC_BLOCK } from '../lockfile/helpers.js';
import { FIXTURES, SUMS } from '../release/helpers.js';
import { cli, publishAll, storedVersion } from './helpers.js';

const start = emulatorPerTest();
const DAY = 86_400_000;
const LOCK_FILE = path.join('infra', '.terraform.lock.hcl');
/** The SHA-256 of the fixture release's SHA256SUMS, as an approval record binds it. */
const FIXTURE_SUMS_SHA256 = createHash('sha256')
  .update(fs.readFileSync(path.join(FIXTURES, 'release', SUMS)))
  .digest('hex');
const SIGNER = keyIdOf('signer');
const OTHER = keyIdOf('other');

const addressOf = (emulator: Emulator): string =>
  `${new URL(emulator.url).host}/${emulator.organization}/example`.toLowerCase();
const aliasOf = (emulator: Emulator): string =>
  `localterraform.com/${emulator.organization}/example`.toLowerCase();

/** A project folder: `infra/.terraform.lock.hcl` holding the fixture's block under each of `addresses`. */
function project(...addresses: string[]): string {
  const cwd = tempRoot('project');
  fs.mkdirSync(path.join(cwd, 'infra'));
  const text = addresses.map((a) => FIXTURE_BLOCK.replace(ADDRESS, a)).join('\n\n');
  fs.writeFileSync(path.join(cwd, LOCK_FILE), `${HEADER}${text}\n`);
  return cwd;
}

/** Writes `policy.yaml` in `cwd`: one providers: entry, `pattern`, holding `lines`. */
function writePolicy(cwd: string, pattern: string, ...lines: string[]): void {
  const text = ['providers:', `  "${pattern}":`, ...lines.map((l) => `    ${l}`), ''].join('\n');
  fs.writeFileSync(path.join(cwd, 'policy.yaml'), text);
}

/** An approval record of 1.2.3 (under `approvals:`), for `sums` signed by `key`. */
function approval(sums: string, key = SIGNER): string[] {
  return [
    '  - version: "1.2.3"',
    `    sha256sums: "${sums}"`,
    `    key: ${key}`,
    '    by: alice',
    '    at: "2026-11-27T09:00:00Z"',
    '    reason: reviewed the changelog',
  ];
}

/** `provider lock check infra --policy policy.yaml …` in `cwd`: GETs only, and no token printed. */
async function check(emulator: Emulator, cwd: string, ...flags: string[]): Promise<CliResult> {
  const result = await cli(emulator, ['lock', 'check', 'infra', '--policy', 'policy.yaml', ...flags], {
    cwd,
  });
  expect(emulator.requestLog.records.filter((r) => r.method !== 'GET')).toEqual([]);
  expect(result.stdout + result.stderr).not.toContain(emulator.ownerToken);
  return result;
}

/** Sets the version's `created-at` in the registry `ageDays` ago; returns it (ms). */
function createdDaysAgo(emulator: Emulator, ageDays: number): number {
  const stored = storedVersion(emulator);
  stored.createdAt = Date.now() - ageDays * DAY;
  return stored.createdAt;
}

/** How many times the version's resource was read (the consumer check's read, and the read of its date). */
const versionReads = (emulator: Emulator): number =>
  emulator.requestLog.records.filter((r) => r.method === 'GET' && r.path.endsWith('/versions/1.2.3')).length;

interface Scenario {
  rule: string;
  /** Sets the emulator up and writes the policy; returns the words the message and the hint must hold. */
  given: (emulator: Emulator, cwd: string) => { message: string[]; hint: string[] };
}

const approve = (emulator: Emulator) =>
  `provider approve ${emulator.organization.toLowerCase()}/example 1.2.3 --policy policy.yaml --reason "…"`;

const SCENARIOS: Scenario[] = [
  {
    rule: 'version-not-approved',
    given: (emulator, cwd) => {
      writePolicy(cwd, addressOf(emulator), 'approval: required');
      return {
        message: [
          `${addressOf(emulator)} 1.2.3 has no approval record, and approval is required (${addressOf(emulator)})`,
        ],
        hint: ['Review 1.2.3', approve(emulator)],
      };
    },
  },
  {
    rule: 'version-in-cooldown',
    given: (emulator, cwd) => {
      writePolicy(cwd, addressOf(emulator), 'min-age: 7d');
      const created = createdDaysAgo(emulator, 2);
      const eligible = new Date(created + 7 * DAY).toISOString();
      return {
        message: [
          `${addressOf(emulator)} 1.2.3 was created in the registry on ${new Date(created).toISOString()}`,
          `held by the policy's min-age until ${eligible}`,
        ],
        hint: [`Wait until ${eligible}, when it becomes eligible`, approve(emulator)],
      };
    },
  },
  {
    rule: 'key-not-allowed',
    given: (emulator, cwd) => {
      writePolicy(cwd, addressOf(emulator), `keys: [${OTHER}]`);
      return {
        message: [
          `${addressOf(emulator)} 1.2.3 is signed by key ${SIGNER}`,
          'which the policy does not allow',
        ],
        hint: ['Do not lock this version', 'provider gpg-keys list'],
      };
    },
  },
  {
    rule: 'approval-does-not-match',
    given: (emulator, cwd) => {
      const sums = 'f'.repeat(64);
      writePolicy(cwd, addressOf(emulator), 'approval: required', 'approvals:', ...approval(sums));
      return {
        message: [
          `${addressOf(emulator)} 1.2.3 was approved for a SHA256SUMS of SHA-256 ${sums}`,
          `the one served now is ${FIXTURE_SUMS_SHA256}`,
        ],
        hint: ['find out why before anything uses it', approve(emulator)],
      };
    },
  },
];

describe('provider lock check --policy: what the policy decides about each version the registry serves', () => {
  it.each(SCENARIOS)('$rule: a finding in text, --json, SARIF and JUnit, exit 3', async ({ rule, given }) => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    const { message, hint } = given(emulator, cwd);

    const text = await check(emulator, cwd);
    expect(text.exitCode, text.stderr).toBe(3);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`${LOCK_FILE}:4: ${addressOf(emulator)} 1.2.3`);
    for (const words of [...message, ...hint]) expect(lines[0]).toContain(words);
    expect(lines[1]).toMatch(/^1 finding in /);

    const json = await check(emulator, cwd, '--json');
    expect(json.exitCode).toBe(3);
    const document = JSON.parse(json.stdout) as {
      ok: boolean;
      findings: { rule: string; message: string; hint: string }[];
    };
    expect(document.ok).toBe(false);
    expect(document.findings).toEqual([
      expect.objectContaining({
        rule,
        provider: addressOf(emulator),
        version: '1.2.3',
        subject: '1.2.3',
        line: 4,
      }),
    ]);
    for (const words of message) expect(document.findings[0]!.message).toContain(words);
    for (const words of hint) expect(document.findings[0]!.hint).toContain(words);

    const sarifRun = await check(emulator, cwd, '--format', 'sarif');
    expect(sarifRun.exitCode).toBe(3);
    const sarif = JSON.parse(sarifRun.stdout) as {
      runs: { tool: { driver: { rules: { id: string; fullDescription: { text: string } }[] } } }[];
    };
    const described = sarif.runs[0]!.tool.driver.rules.find((r) => r.id === rule);
    expect(described?.fullDescription.text).toBeTruthy();
    const read = await readSarif(sarif);
    expect(read.findings.map((f) => [f.ruleId, f.level])).toEqual([[rule, 'error']]);
    expect(read.findings[0]!.message).toContain(message[0]);
    expect(read.findings[0]!.helpUri).toMatch(new RegExp(`supply-chain\\.md#${rule}$`));

    const junitRun = await check(emulator, cwd, '--format', 'junit');
    expect(junitRun.exitCode).toBe(3);
    const junit = readJunit(junitRun.stdout);
    expect(junit.tests).toBe(1);
    expect(junit.findings).toHaveLength(1);
    expect(junit.findings[0]!.level).toBe('error');
    expect(junit.findings[0]!.ruleId).toContain(`${rule}: 1.2.3`);
    expect(junit.findings[0]!.message).toContain(message[0]);
  });

  it('passes (exit 0) a version approved for the bytes and key the registry serves, under approval: required', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    writePolicy(
      cwd,
      addressOf(emulator),
      'approval: required',
      'approvals:',
      ...approval(FIXTURE_SUMS_SHA256),
    );
    const result = await check(emulator, cwd);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toContain('1 provider hold up');
  });

  it('an approval for the right bytes but another key does not match', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    const records = approval(FIXTURE_SUMS_SHA256, OTHER);
    writePolicy(cwd, addressOf(emulator), 'approval: required', 'approvals:', ...records);
    const result = await check(emulator, cwd, '--json');
    expect(result.exitCode).toBe(3);
    const document = JSON.parse(result.stdout) as { findings: { rule: string; message: string }[] };
    expect(document.findings.map((f) => f.rule)).toEqual(['approval-does-not-match']);
    expect(document.findings[0]!.message).toContain(`was approved as signed by ${OTHER}`);
  });

  it('passes a version older than the min-age, and a younger one approved (an approval lifts the cooldown)', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    writePolicy(cwd, addressOf(emulator), 'min-age: 7d');
    createdDaysAgo(emulator, 10);
    const old = await check(emulator, cwd);
    expect(old.exitCode, old.stdout).toBe(0);
    // The date is read from the version's resource: once by the consumer check, once for its created-at.
    expect(versionReads(emulator)).toBe(2);

    createdDaysAgo(emulator, 2);
    const approved = ['min-age: 7d', 'approvals:', ...approval(FIXTURE_SUMS_SHA256)];
    writePolicy(cwd, addressOf(emulator), ...approved);
    const young = await check(emulator, cwd);
    expect(young.exitCode, young.stdout).toBe(0);
  });

  it('reads no date without a min-age', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    writePolicy(cwd, addressOf(emulator), `keys: [${SIGNER}]`);
    const result = await check(emulator, cwd);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(versionReads(emulator)).toBe(1);
  });

  it('holds both spellings of the private registry to a pattern written either way, each version read once', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator), aliasOf(emulator));
    createdDaysAgo(emulator, 2);
    for (const pattern of [`localterraform.com/${emulator.organization}/*`, addressOf(emulator)]) {
      writePolicy(cwd, pattern, 'min-age: 7d');
      emulator.requestLog.clear();
      const result = await check(emulator, cwd, '--json');
      expect(result.exitCode, result.stderr).toBe(3);
      const document = JSON.parse(result.stdout) as { findings: { rule: string; provider: string }[] };
      expect(document.findings.map((f) => [f.rule, f.provider])).toEqual([
        ['version-in-cooldown', addressOf(emulator)],
        ['version-in-cooldown', aliasOf(emulator)],
      ]);
      // One (type, version): read once for both blocks.
      expect(versionReads(emulator)).toBe(2);
    }
  });

  it('finds a key the policy does not pin beside a version the policy does not allow, the latter as before', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    writePolicy(cwd, addressOf(emulator), 'versions: "~> 2.0"', `keys: [${OTHER}]`);
    const result = await check(emulator, cwd);
    expect(result.exitCode).toBe(3);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain(`${addressOf(emulator)} 1.2.3 does not meet the policy's versions "~> 2.0"`);
    expect(lines[1]).toContain(`${addressOf(emulator)} 1.2.3 is signed by key ${SIGNER}`);
  });

  it('holds an allowed provider from elsewhere to approval: required, not to a cooldown it cannot date', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    fs.appendFileSync(path.join(cwd, LOCK_FILE), `\n${PUBLIC_BLOCK}\n`);
    fs.writeFileSync(
      path.join(cwd, 'policy.yaml'),
      [
        'allow: ["registry.terraform.io/hashicorp/*"]',
        'providers:',
        '  "registry.terraform.io/hashicorp/*": { min-age: 7d, approval: required }',
        '',
      ].join('\n'),
    );
    const result = await check(emulator, cwd);
    expect(result.exitCode, result.stdout).toBe(3);
    expect(result.stdout).toContain('registry.terraform.io/hashicorp/random 3.6.3 has no approval record');
    expect(result.stdout).not.toContain('version-in-cooldown');
    fs.writeFileSync(
      path.join(cwd, 'policy.yaml'),
      [
        'allow: ["registry.terraform.io/hashicorp/*"]',
        'providers:',
        '  "registry.terraform.io/hashicorp/*": { min-age: 7d }',
        '',
      ].join('\n'),
    );
    const cooled = await check(emulator, cwd);
    expect(cooled.exitCode, cooled.stdout).toBe(0);
    expect(cooled.stdout).toContain('2 providers hold up');
  });

  it('a run task reading the SARIF fails, an outcome naming the finding', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = project(addressOf(emulator));
    writePolicy(cwd, addressOf(emulator), 'approval: required');
    const result = await check(emulator, cwd, '--format', 'sarif');
    expect(result.exitCode).toBe(3);
    // What runtask serve makes of its handler's exit (src/runtask/server/handler/handlerResult.ts).
    const read = await interpretHandlerExit(
      {
        exitCode: result.exitCode,
        signal: null,
        timedOut: false,
        aborted: false,
        stdout: result.stdout,
        stdoutTruncated: false,
        stderrTail: result.stderr,
        durationMs: 1,
      },
      '1m',
    );
    expect(read.source).toBe('sarif');
    expect(read.result.status).toBe('failed');
    expect(read.result.outcomes).toEqual([
      expect.objectContaining({
        description: expect.stringContaining(`${addressOf(emulator)} 1.2.3 has no approval record`) as string,
        url: expect.stringMatching(/supply-chain\.md#version-not-approved$/) as string,
      }),
    ]);
  });
});
