/**
 * `provider publish --tag key=value` and `versions list|show` with version tags, through the emulator: the tags
 * are set with one PATCH after the version exists (its whole set replaced, as the platform's PATCH does:
 * hashicorp/web-unified-docs, …/private-registry/providers/version-tags.mdx), read back by `versions show` and
 * `versions list`, left alone when they already match (no PATCH), shown by --dry-run without being written, and
 * a bad tag stops the run with exit 2 before any request. `versions list --tag` asks the documented
 * `filter[tagged][i][key|value]` query (providers/index.mdx).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { call, emulatorPerTest } from '../../helpers/emulator/index.js';
import { normalise } from '../../helpers/normalise.js';
import { tempRoot } from '../../helpers/tmp.js';
import { cli, publishAll } from '../helpers.js';
import { FULL_PUBLISH, jsonOf, publish, writeRequests, writes } from './helpers.js';

const emulator = emulatorPerTest();

type TagsReport = { action: string; tags: unknown; previous: unknown; set: boolean } | null;

function versionPath(e: Emulator, version = '1.2.3'): string {
  return `/api/v2/organizations/${e.organization}/registry-providers/private/${e.organization}/example/versions/${version}`;
}

const PROD_CORE = [
  { key: 'environment', value: 'prod' },
  { key: 'team', value: 'core' },
];

describe('provider publish --tag', () => {
  it('tags the version it creates with one PATCH; versions show and list read the tags back', async () => {
    const e = await emulator();
    const result = await publish(e, ['--tag', 'team=core', '--tag', 'environment=prod', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(jsonOf(result).tags as TagsReport).toEqual({
      action: 'set',
      tags: PROD_CORE,
      previous: null,
      set: true,
    });
    expect(writes(e)).toEqual([...FULL_PUBLISH, `PATCH ${versionPath(e)}`].sort());

    const show = await cli(e, ['versions', 'show', '1.2.3', '--json']);
    expect((JSON.parse(show.stdout) as { version: { tags: unknown } }).version.tags).toEqual(PROD_CORE);
    const shown = await cli(e, ['versions', 'show', '1.2.3']);
    expect(normalise(shown.stdout)).toContain('tags       environment=prod, team=core\n');
    const list = await cli(e, ['versions', 'list', '--json']);
    expect((JSON.parse(list.stdout) as { versions: { tags: unknown }[] }).versions[0]?.tags).toEqual(
      PROD_CORE,
    );
    const table = await cli(e, ['versions', 'list']);
    expect(table.stdout).toContain('\tenvironment=prod,team=core\t');
  });

  it('sends no PATCH when the version already carries exactly those tags (read first)', async () => {
    const e = await emulator();
    expect((await publish(e, ['--tag', 'environment=prod', '--tag', 'team=core'])).exitCode).toBe(0);
    e.requestLog.clear();
    const again = await publish(e, [
      '--tag',
      'team=core',
      '--tag',
      'environment=prod',
      '--tag',
      'team=core',
      '--json',
    ]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(writeRequests(e)).toEqual([]);
    expect(e.requestLog.records.some((r) => r.method === 'GET' && r.path.endsWith('/tag-bindings'))).toBe(
      true,
    );
    expect(jsonOf(again).tags as TagsReport).toEqual({
      action: 'skip',
      tags: PROD_CORE,
      previous: PROD_CORE,
      set: false,
    });
  });

  it("replaces an existing version's whole tag set, saying what it replaced; no other write", async () => {
    const e = await emulator();
    expect((await publish(e, ['--tag', 'environment=prod', '--tag', 'team=core'])).exitCode).toBe(0);
    e.requestLog.clear();
    const result = await publish(e, ['--tag', 'environment=staging', '--no-check']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(writeRequests(e)).toEqual([`PATCH ${versionPath(e)}`]);
    expect(result.stdout).toContain(
      'tags       environment=staging: set (replacing environment=prod, team=core)',
    );
    expect(result.stdout).toContain('everything was already there, tags set');
    const show = await cli(e, ['versions', 'show', '1.2.3', '--json']);
    expect((JSON.parse(show.stdout) as { version: { tags: unknown } }).version.tags).toEqual([
      { key: 'environment', value: 'staging' },
    ]);
  });

  it("puts the registry's own tags in the step summary as literal text, never as Markdown", async () => {
    const e = await emulator();
    expect((await publish(e, ['--tag', 'team=core'])).exitCode).toBe(0);
    // A registry answering tags no client could set: a link, an image, HTML and a line that starts a table row.
    const hostile =
      '[click](https://evil.example) ![x](https://evil.example/x.png) <img src=x>\n| forged | row |';
    const stored = e.store.data.versions.find((v) => v.version === '1.2.3')!;
    stored.tags = [{ id: 'tb-hostile', key: 'note', value: hostile, createdAt: Date.now() }];
    const summary = path.join(tempRoot(), 'summary.md');
    const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary };
    const result = await publish(e, ['--tag', 'team=core', '--no-check'], { env });
    expect(result.exitCode, result.stderr).toBe(0);
    const text = fs.readFileSync(summary, 'utf8');
    expect(text).toContain(
      [
        'Tags:',
        '',
        '    team=core: set (replacing note=[click](https://evil.example) ![x](https://evil.example/x.png) <img src=x>',
        '    | forged | row |)',
        '',
      ].join('\n'),
    );
    // Every line holding the registry's words is inside the indented code block.
    for (const line of text.split('\n').filter((l) => l.includes('evil.example') || l.includes('forged'))) {
      expect(line.startsWith('    '), line).toBe(true);
    }
  });

  it('--dry-run shows the tags it would set and writes nothing', async () => {
    const e = await emulator();
    const result = await publish(e, ['--tag', 'environment=prod', '--dry-run']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('tags       environment=prod: set');
    expect(writeRequests(e)).toEqual([]);
    const json = await publish(e, ['--tag', 'environment=prod', '--dry-run', '--json']);
    expect(jsonOf(json).tags as TagsReport).toEqual({
      action: 'set',
      tags: [{ key: 'environment', value: 'prod' }],
      previous: null,
      set: true,
    });
  });

  it.each([
    ['env/x=dev', '--tag "env/x=dev": the key holds "/"'],
    ['environment', '--tag "environment": expected key=value'],
    ['environment=', '--tag "environment=": the value is empty'],
  ])('refuses --tag %s with exit 2, naming it, before any request', async (tag, message) => {
    const e = await emulator();
    const result = await publish(e, ['--tag', 'team=core', '--tag', tag]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
    expect(result.stderr).toContain('hint: Give --tag key=value');
    expect(e.requestLog.records).toEqual([]);
  });
});

describe('provider versions list --tag', () => {
  it('lists only the versions carrying one of the tags, asking the documented filter', async () => {
    const e = await emulator();
    await publishAll(e);
    await publishAll(e, {
      version: '1.3.0',
      createProvider: false,
      addKey: false,
      platforms: ['linux_amd64'],
      uploads: ['sums'],
    });
    const body = (key: string, value: string): unknown => ({
      data: {
        type: 'registry-provider-versions',
        relationships: { 'tag-bindings': { data: [{ type: 'tag-bindings', attributes: { key, value } }] } },
      },
    });
    for (const [version, value] of [
      ['1.2.3', 'prod'],
      ['1.3.0', 'dev'],
    ] as const) {
      const reply = await call(e.url, 'PATCH', versionPath(e, version), {
        token: e.ownerToken,
        body: body('environment', value),
      });
      expect(reply.status).toBe(200);
    }
    e.requestLog.clear();
    const prod = await cli(e, ['versions', 'list', '--tag', 'environment=prod', '--json']);
    expect(prod.exitCode, prod.stderr).toBe(0);
    const doc = JSON.parse(prod.stdout) as {
      filter: unknown;
      versions: { version: string; tags: unknown }[];
    };
    expect(doc.filter).toEqual([{ key: 'environment', value: 'prod' }]);
    expect(doc.versions.map((v) => [v.version, v.tags])).toEqual([
      ['1.2.3', [{ key: 'environment', value: 'prod' }]],
    ]);
    const listed = e.requestLog.records.find((r) => r.path.endsWith('/example/versions'));
    expect(new URLSearchParams(listed?.query ?? '').get('filter[tagged][0][value]')).toBe('prod');

    const either = await cli(e, [
      'versions',
      'list',
      '--tag',
      'environment=prod',
      '--tag',
      'environment=dev',
    ]);
    expect(either.stdout.split('\n').map((l) => l.split('\t')[0])).toEqual(['1.3.0', '1.2.3', '']);
    const anyValue = await cli(e, ['versions', 'list', '--tag', 'environment', '--json']);
    expect((JSON.parse(anyValue.stdout) as { versions: unknown[] }).versions).toHaveLength(2);
    const none = await cli(e, ['versions', 'list', '--tag', 'environment=qa']);
    expect(none).toMatchObject({ exitCode: 0, stdout: '' });
    expect(none.stderr).toContain('has no version tagged environment=qa.');

    e.requestLog.clear();
    const bad = await cli(e, ['versions', 'list', '--tag', 'env/x']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('error: --tag "env/x": the key holds "/"');
    expect(e.requestLog.records).toEqual([]);
  });
});
