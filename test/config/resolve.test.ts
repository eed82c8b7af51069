import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it, expect } from 'vitest';
import { resolveSettings, type SettingsFlags } from '../../src/config/resolve.js';
import { tempRoot } from '../helpers/tmp.js';
import { asyncUsageErrorOf, writeFiles } from './helpers.js';

/** A project folder with an optional .providerrc.json. */
function project(config?: object): string {
  const dir = tempRoot();
  if (config !== undefined) writeFiles(dir, { '.providerrc.json': config });
  return dir;
}

function resolve(flags: SettingsFlags = {}, env: Record<string, string | undefined> = {}, config?: object) {
  return resolveSettings({ flags, env, cwd: project(config) });
}

describe('resolveSettings defaults', () => {
  it('uses app.terraform.io, auto concurrency and 5 minutes when nothing is set', async () => {
    expect(await resolve()).toEqual({
      apiHost: {
        baseUrl: 'https://app.terraform.io',
        host: 'app.terraform.io',
        hostname: 'app.terraform.io',
      },
      concurrency: 'auto',
      waitTimeoutMs: 300_000,
      warnings: [],
      sources: { hostname: 'default', concurrency: 'default', waitTimeout: 'default' },
    });
  });
});

// Every combination of flag, environment and file: the highest layer present wins, else the default.
const LAYERS = ['flag', 'env', 'config'] as const;
const COMBINATIONS = Array.from({ length: 8 }, (_, i) => LAYERS.filter((_, bit) => (i >> bit) & 1));

describe.each([
  {
    setting: 'hostname',
    flag: { hostname: 'flag.example.com' },
    env: { TFE_HOSTNAME: 'env.example.com' },
    config: { hostname: 'config.example.com' },
    read: (s: Awaited<ReturnType<typeof resolve>>) => s.apiHost.host,
    values: { flag: 'flag.example.com', env: 'env.example.com', config: 'config.example.com' },
    fallback: 'app.terraform.io',
  },
  {
    setting: 'organization',
    flag: { organization: 'flag-org' },
    env: { TFE_ORGANIZATION: 'env-org' },
    config: { organization: 'config-org' },
    read: (s: Awaited<ReturnType<typeof resolve>>) => s.organization,
    values: { flag: 'flag-org', env: 'env-org', config: 'config-org' },
    fallback: undefined,
  },
  {
    setting: 'concurrency',
    flag: { concurrency: '7' },
    env: { PROVIDER_CONCURRENCY: '9' },
    config: { concurrency: 11 },
    read: (s: Awaited<ReturnType<typeof resolve>>) => s.concurrency,
    values: { flag: 7, env: 9, config: 11 },
    fallback: 'auto',
  },
  {
    setting: 'waitTimeout',
    flag: { waitTimeout: '10m' },
    env: { PROVIDER_WAIT_TIMEOUT: '90' },
    config: { waitTimeout: '1h' },
    read: (s: Awaited<ReturnType<typeof resolve>>) => s.waitTimeoutMs,
    values: { flag: 600_000, env: 90_000, config: 3_600_000 },
    fallback: 300_000,
  },
])('precedence of $setting', (row) => {
  it.each(COMBINATIONS.map((present) => [present.join(' + ') || 'nothing', present] as const))(
    '%s',
    async (_, present) => {
      const settings = await resolve(
        present.includes('flag') ? row.flag : {},
        present.includes('env') ? row.env : {},
        present.includes('config') ? row.config : undefined,
      );
      const winner = present[0];
      expect(row.read(settings)).toBe(winner === undefined ? row.fallback : row.values[winner]);
      expect(settings.sources[row.setting]).toBe(
        winner ?? (row.fallback === undefined ? undefined : 'default'),
      );
    },
  );
});

describe('resolveSettings hostname', () => {
  it.each([
    [{ TFE_ADDRESS: 'https://tfe.example.com' }, 'https://tfe.example.com'],
    [{ TFE_ADDRESS: 'http://127.0.0.1:8080/' }, 'http://127.0.0.1:8080'],
    [{ TFE_HOSTNAME: 'http://127.0.0.1:8080' }, 'http://127.0.0.1:8080'],
    [{ TFE_HOSTNAME: 'tfe.example.com:8443' }, 'https://tfe.example.com:8443'],
    [{ TFE_HOSTNAME: 'a.example.com', TFE_ADDRESS: 'https://b.example.com' }, 'https://a.example.com'],
    [{ TFE_HOSTNAME: '', TFE_ADDRESS: 'https://b.example.com' }, 'https://b.example.com'],
    [{ TFE_HOSTNAME: 'a.example.com', TFE_ADDRESS: 'not a url' }, 'https://a.example.com'],
  ])('from %j → %s', async (env, baseUrl) => {
    const settings = await resolve({}, env);
    expect(settings.apiHost.baseUrl).toBe(baseUrl);
    expect(settings.sources.hostname).toBe('env');
  });

  it('warns when TFE_HOSTNAME and TFE_ADDRESS disagree, and only then', async () => {
    const differ = await resolve({}, { TFE_HOSTNAME: 'a.example.com', TFE_ADDRESS: 'https://b.example.com' });
    expect(differ.warnings).toEqual([
      'TFE_HOSTNAME (https://a.example.com) and TFE_ADDRESS (https://b.example.com) differ; using TFE_HOSTNAME',
    ]);
    const agree = await resolve({}, { TFE_HOSTNAME: 'a.example.com', TFE_ADDRESS: 'https://a.example.com/' });
    expect(agree.warnings).toEqual([]);
    const flagged = await resolve(
      { hostname: 'c.example.com' },
      { TFE_HOSTNAME: 'a.example.com', TFE_ADDRESS: 'https://b.example.com' },
    );
    expect(flagged.warnings).toEqual([]);
  });

  it.each([
    [{ hostname: 'ftp://x.example.com' }, {}, undefined, '--hostname'],
    [{ hostname: '' }, {}, undefined, '--hostname'],
    [{}, { TFE_HOSTNAME: 'a b' }, undefined, 'TFE_HOSTNAME'],
    [{}, { TFE_ADDRESS: 'https://x.example.com?q=1' }, undefined, 'TFE_ADDRESS'],
  ])('names the source of a bad hostname: %j %j → %s', async (flags, env, config, source) => {
    const error = await asyncUsageErrorOf(() => resolve(flags, env, config));
    expect(error.message).toContain(source);
  });

  it('names the config file and key for a bad hostname there', async () => {
    const cwd = project({ hostname: 'ftp://x.example.com' });
    const error = await asyncUsageErrorOf(() => resolveSettings({ flags: {}, env: {}, cwd }));
    expect(error.message).toContain(`"hostname" in ${path.join(cwd, '.providerrc.json')}`);
  });
});

describe('resolveSettings namespace and name', () => {
  it.each([
    [{ organization: 'acme' }, {}, {}, 'acme', 'default'],
    [{}, { TFE_ORGANIZATION: 'env-org' }, {}, 'env-org', 'default'],
    [{ organization: 'acme' }, {}, { namespace: 'file-ns' }, 'file-ns', 'config'],
    [{ organization: 'acme', namespace: 'flag-ns' }, {}, { namespace: 'file-ns' }, 'flag-ns', 'flag'],
    [{}, {}, {}, undefined, undefined],
  ])('flags %j env %j file %j → namespace %s (%s)', async (flags, env, config, namespace, source) => {
    const settings = await resolve(flags, env, config);
    expect(settings.namespace).toBe(namespace);
    expect(settings.sources.namespace).toBe(source);
  });

  it('takes the name from the flag, then the file', async () => {
    expect((await resolve({ name: 'flag-name' }, {}, { name: 'file-name' })).name).toBe('flag-name');
    const fromFile = await resolve({}, {}, { name: 'file-name' });
    expect([fromFile.name, fromFile.sources.name]).toEqual(['file-name', 'config']);
  });

  it.each(['organization', 'namespace', 'name'] as const)('refuses an empty --%s', async (flag) => {
    const error = await asyncUsageErrorOf(() => resolve({ [flag]: ' ' }));
    expect(error.message).toBe(`--${flag} was given an empty value`);
  });

  it('treats empty environment variables as unset', async () => {
    const settings = await resolve(
      {},
      { TFE_ORGANIZATION: '', PROVIDER_CONCURRENCY: '', PROVIDER_WAIT_TIMEOUT: ' ' },
      { organization: 'file-org' },
    );
    expect(settings.organization).toBe('file-org');
    expect(settings.sources).toMatchObject({ concurrency: 'default', waitTimeout: 'default' });
  });
});

describe('resolveSettings concurrency and wait timeout', () => {
  it.each([
    [{ concurrency: 1 }, 1],
    [{ concurrency: 32 }, 32],
    [{ concurrency: '16' }, 16],
    [{ concurrency: ' 8 ' }, 8],
    [{ concurrency: 'auto' }, 'auto'],
    [{ concurrency: ' AUTO ' }, 'auto'],
  ])('accepts %j', async (flags, expected) => {
    expect((await resolve(flags)).concurrency).toBe(expected);
  });

  it.each([
    [{ concurrency: 0 }, {}, '--concurrency must be "auto" or an integer from 1 to 32 (got "0")'],
    [{ concurrency: 33 }, {}, '--concurrency must be "auto" or an integer from 1 to 32 (got "33")'],
    [{ concurrency: 2.5 }, {}, '--concurrency must be "auto" or an integer from 1 to 32 (got "2.5")'],
    [{ concurrency: 'abc' }, {}, '--concurrency must be "auto" or an integer from 1 to 32 (got "abc")'],
    [{ concurrency: '4x' }, {}, '--concurrency must be "auto" or an integer from 1 to 32 (got "4x")'],
    [{ concurrency: '-1' }, {}, '--concurrency must be "auto" or an integer from 1 to 32 (got "-1")'],
    [
      {},
      { PROVIDER_CONCURRENCY: '64' },
      'PROVIDER_CONCURRENCY must be "auto" or an integer from 1 to 32 (got "64")',
    ],
    [
      {},
      { PROVIDER_CONCURRENCY: 'lots' },
      'PROVIDER_CONCURRENCY must be "auto" or an integer from 1 to 32 (got "lots")',
    ],
  ])('refuses %j %j', async (flags, env, message) => {
    const error = await asyncUsageErrorOf(() => resolve(flags, env));
    expect(error.message).toBe(message);
    expect(error.hint).toContain('default is auto');
  });

  it('names the config file for a bad concurrency there', async () => {
    const cwd = project({ concurrency: 99 });
    const error = await asyncUsageErrorOf(() => resolveSettings({ flags: {}, env: {}, cwd }));
    expect(error.message).toContain(path.join(cwd, '.providerrc.json'));
    expect(error.message).toContain('"concurrency" must be "auto" or an integer from 1 to 32');
  });

  it.each([
    [{ waitTimeout: '1h30m' }, {}, undefined, 5_400_000],
    [{}, { PROVIDER_WAIT_TIMEOUT: '45s' }, undefined, 45_000],
    [{}, {}, { waitTimeout: 120 }, 120_000],
    [{}, {}, { waitTimeout: '2.5' }, 2_500],
  ])('reads the wait timeout from %j %j %j', async (flags, env, config, expected) => {
    expect((await resolve(flags, env, config)).waitTimeoutMs).toBe(expected);
  });

  it.each([
    [{ waitTimeout: 'soon' }, {}, '--wait-timeout'],
    [{ waitTimeout: '' }, {}, '--wait-timeout'],
    [{}, { PROVIDER_WAIT_TIMEOUT: '5 minutes' }, 'PROVIDER_WAIT_TIMEOUT'],
  ])('names the source of a bad wait timeout: %j %j', async (flags, env, source) => {
    const error = await asyncUsageErrorOf(() => resolve(flags, env));
    expect(error.message).toMatch(new RegExp(`^${source} `));
  });
});

describe('resolveSettings config-file-only keys', () => {
  it('resolves key relative to the config file, not the working folder', async () => {
    const root = project({ key: 'keys/public.asc', protocols: ['6.0'], color: false });
    const cwd = path.join(root, 'sub', 'dir');
    fs.mkdirSync(cwd, { recursive: true });
    const settings = await resolveSettings({ flags: {}, env: {}, cwd });
    expect(settings.keyFile).toBe(path.join(root, 'keys', 'public.asc'));
    expect(settings.protocols).toEqual(['6.0']);
    expect(settings.color).toBe(false);
    expect(settings.configFile).toBe(path.join(root, '.providerrc.json'));
    expect(settings.sources).toMatchObject({ key: 'config', protocols: 'config', color: 'config' });
  });

  it('keeps an absolute key path', async () => {
    const absolute = path.join(tempRoot(), 'public.asc');
    expect((await resolve({}, {}, { key: absolute })).keyFile).toBe(absolute);
  });

  it('loads --config relative to cwd and passes its warnings on', async () => {
    const cwd = project({ organization: 'discovered' });
    writeFiles(cwd, { 'conf/ci.yaml': 'organization: from-ci\nextra: 1\nkey: ci.asc\n' });
    const settings = await resolveSettings({ flags: { config: 'conf/ci.yaml' }, env: {}, cwd });
    const file = path.join(cwd, 'conf', 'ci.yaml');
    expect(settings.organization).toBe('from-ci');
    expect(settings.configFile).toBe(file);
    expect(settings.keyFile).toBe(path.join(cwd, 'conf', 'ci.asc'));
    expect(settings.warnings).toEqual([`unknown key "extra" in ${file} (ignored)`]);
  });

  it('fails on a missing --config file', async () => {
    const error = await asyncUsageErrorOf(() => resolve({ config: 'missing.json' }));
    expect(error.message).toMatch(/^Configuration file not found: .*missing\.json$/);
  });
});
