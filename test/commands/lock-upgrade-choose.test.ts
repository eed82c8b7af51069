/**
 * The choice of `provider lock upgrade` for one block (src/commands/lockUpgrade/choose.ts), as Terraform selects
 * versions (hashicorp/terraform: `versions.MeetingConstraints` over apparentlymart/go-versions): the newest version
 * meeting the block's constraints, a pre-release only when a constraint names it exactly; then `--to`, `--min-age`
 * counted from the registry's `created-at`, `--version`; never down from the locked version but to `--version`.
 */
import { describe, expect, it } from 'vitest';
import { chooseVersion, type ServedVersionDate } from '../../src/commands/lockUpgrade/choose.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const DAY = 86_400_000;
const served = (entries: [string, number][]): ServedVersionDate[] =>
  entries.map(([version, age]) => ({ version, createdAt: new Date(NOW.getTime() - age * DAY) }));
const SERVED = served([
  ['1.2.3', 30],
  ['1.3.0', 20],
  ['1.4.0', 2],
  ['2.0.0-beta.1', 3],
  ['2.0.0', 1],
]);

describe('lock upgrade: the version a block moves to', () => {
  it('the newest meeting the constraints; a pre-release only when named exactly', () => {
    expect(chooseVersion(SERVED, '1.2.3', '~> 1.2', { now: NOW })).toEqual({
      version: '1.4.0',
      held: [{ version: '2.0.0', reason: 'excluded by the lock file’s constraints' }],
    });
    expect(chooseVersion(SERVED, '1.2.3', '>= 1.2.0', { now: NOW }).version).toBe('2.0.0');
    expect(chooseVersion(SERVED, '1.2.3', undefined, { now: NOW }).version).toBe('2.0.0');
    const beta = chooseVersion(SERVED, '1.2.3', '2.0.0-beta.1', { now: NOW });
    expect(beta.version).toBe('2.0.0-beta.1');
    const noBeta = chooseVersion(
      served([
        ['1.2.3', 9],
        ['2.0.0-beta.1', 3],
      ]),
      '1.2.3',
      '>= 1.0.0',
      { now: NOW },
    );
    // A pre-release no constraint names is no candidate: not even said to be held.
    expect(noBeta).toEqual({ version: '1.2.3', held: [] });
  });

  it('--to and --min-age narrow it, and say until when a version is held', () => {
    expect(chooseVersion(SERVED, '1.2.3', '>= 1.2.0', { to: '< 1.4.0', now: NOW }).version).toBe('1.3.0');
    const cooled = chooseVersion(SERVED, '1.2.3', '>= 1.2.0', { minAgeMs: 7 * DAY, now: NOW });
    expect(cooled.version).toBe('1.3.0');
    expect(cooled.held).toEqual([
      {
        version: '2.0.0',
        reason: `held by --min-age until ${new Date(NOW.getTime() + 6 * DAY).toISOString()}`,
      },
      {
        version: '1.4.0',
        reason: `held by --min-age until ${new Date(NOW.getTime() + 5 * DAY).toISOString()}`,
      },
    ]);
  });

  it('never moves down, but to --version; a --version not served is none', () => {
    expect(chooseVersion(SERVED, '1.4.0', '~> 1.2', { minAgeMs: 7 * DAY, now: NOW })).toEqual({
      version: '1.4.0',
      held: [{ version: '2.0.0', reason: 'excluded by the lock file’s constraints' }],
    });
    expect(chooseVersion(SERVED, '1.4.0', '~> 1.2', { pin: '1.3.0', now: NOW }).version).toBe('1.3.0');
    expect(chooseVersion(SERVED, '1.4.0', '~> 1.2', { pin: '9.9.9', now: NOW })).toEqual({
      version: undefined,
      held: [],
      none: '--version 9.9.9: the registry does not serve 9.9.9',
    });
    // A version the configuration's constraints exclude would make terraform init refuse the lock file.
    expect(chooseVersion(SERVED, '1.2.3', '~> 1.2', { pin: '2.0.0', now: NOW }).none).toBe(
      '--version 2.0.0: excluded by the lock file’s constraints',
    );
  });

  it('a --version pre-release names itself; a version not complete in the registry is held', () => {
    expect(chooseVersion(SERVED, '1.2.3', '~> 1.2', { pin: '2.0.0-beta.1', now: NOW }).none).toBe(
      '--version 2.0.0-beta.1: excluded by the lock file’s constraints',
    );
    const publishing = [...SERVED, { version: '1.5.0', createdAt: NOW, complete: false }];
    expect(chooseVersion(publishing, '1.2.3', '~> 1.2', { now: NOW })).toEqual({
      version: '1.4.0',
      held: [
        { version: '2.0.0', reason: 'excluded by the lock file’s constraints' },
        {
          version: '1.5.0',
          reason: 'not complete in the registry (its SHA256SUMS or their signature is not uploaded)',
        },
      ],
    });
  });
});
