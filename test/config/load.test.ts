import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it, expect } from 'vitest';
import { loadConfigFile, SEARCH_PLACES } from '../../src/config/load.js';
import { tempRoot } from '../helpers/tmp.js';
import { asyncUsageErrorOf, writeFiles } from './helpers.js';

const SETTINGS = { organization: 'acme', concurrency: 8 };

describe('loadConfigFile: discovery', () => {
  it.each([
    ['package.json', { name: 'x', provider: SETTINGS }],
    ['.providerrc', 'organization: acme\nconcurrency: 8\n'],
    ['.providerrc', JSON.stringify(SETTINGS)],
    ['.providerrc.json', SETTINGS],
    ['.providerrc.yaml', 'organization: acme\nconcurrency: 8\n'],
    ['.providerrc.yml', 'organization: acme\nconcurrency: 8\n'],
    ['provider.config.js', `module.exports = ${JSON.stringify(SETTINGS)};`],
    ['provider.config.mjs', `export default ${JSON.stringify(SETTINGS)};`],
  ])('finds %s (%#)', async (name, content) => {
    const dir = tempRoot();
    writeFiles(dir, { [name]: content });
    const loaded = await loadConfigFile({ cwd: dir });
    expect(loaded).toEqual({ config: SETTINGS, filepath: path.join(dir, name), warnings: [] });
  });

  it('looks in the documented places, in order', () => {
    expect(SEARCH_PLACES).toEqual([
      'package.json',
      '.providerrc',
      '.providerrc.json',
      '.providerrc.yaml',
      '.providerrc.yml',
      'provider.config.js',
      'provider.config.mjs',
    ]);
  });

  it('takes the first search place when several files exist', async () => {
    const dir = tempRoot();
    writeFiles(dir, { 'package.json': { provider: { name: 'pkg' } }, '.providerrc.json': { name: 'rc' } });
    expect((await loadConfigFile({ cwd: dir })).config).toEqual({ name: 'pkg' });
  });

  it('skips a package.json without a "provider" key and an empty .providerrc', async () => {
    const dir = tempRoot();
    writeFiles(dir, { 'package.json': { name: 'x' }, '.providerrc': '', '.providerrc.yml': 'name: found\n' });
    expect(await loadConfigFile({ cwd: dir })).toMatchObject({ config: { name: 'found' } });
  });

  it('searches parent folders up to the project root', async () => {
    const root = tempRoot();
    writeFiles(root, { '.providerrc.json': { name: 'up' } });
    const cwd = path.join(root, 'a', 'b');
    fs.mkdirSync(cwd, { recursive: true });
    expect(await loadConfigFile({ cwd })).toEqual({
      config: { name: 'up' },
      filepath: path.join(root, '.providerrc.json'),
      warnings: [],
    });
  });

  it.each(['go.mod', 'package.json', '.git'])('does not look above a folder holding %s', async (marker) => {
    const outer = tempRoot();
    writeFiles(outer, { '.providerrc.json': { name: 'outside' } });
    const project = path.join(outer, 'project');
    if (marker === '.git') fs.mkdirSync(path.join(project, '.git'), { recursive: true });
    else writeFiles(project, { [marker]: marker === 'package.json' ? { name: 'p' } : 'module p\n' });
    const cwd = path.join(project, 'sub');
    fs.mkdirSync(cwd);
    expect(await loadConfigFile({ cwd })).toEqual({ config: {}, warnings: [] });
  });

  it('returns an empty configuration when there is no file', async () => {
    expect(await loadConfigFile({ cwd: tempRoot() })).toEqual({ config: {}, warnings: [] });
  });
});

describe('loadConfigFile: --config', () => {
  it.each([
    ['custom.json', JSON.stringify(SETTINGS)],
    ['conf/custom.yaml', 'organization: acme\nconcurrency: 8\n'],
    ['settings', 'organization: acme\nconcurrency: 8\n'],
    ['custom.mjs', `export default ${JSON.stringify(SETTINGS)};`],
    ['custom.cjs', `module.exports = ${JSON.stringify(SETTINGS)};`],
    ['other/package.json', { provider: SETTINGS }],
  ])('loads %s relative to cwd, ignoring discovered files', async (name, content) => {
    const dir = tempRoot();
    writeFiles(dir, { [name]: content, '.providerrc.json': { organization: 'discovered' } });
    expect(await loadConfigFile({ cwd: dir, explicitPath: name })).toEqual({
      config: SETTINGS,
      filepath: path.join(dir, name),
      warnings: [],
    });
  });

  it('loads an absolute path', async () => {
    const dir = tempRoot();
    writeFiles(dir, { 'x.json': { name: 'abs' } });
    const loaded = await loadConfigFile({ cwd: tempRoot(), explicitPath: path.join(dir, 'x.json') });
    expect(loaded.config).toEqual({ name: 'abs' });
  });

  it('treats an explicit package.json without a "provider" key as empty', async () => {
    const dir = tempRoot();
    writeFiles(dir, { 'package.json': { name: 'x' } });
    const loaded = await loadConfigFile({ cwd: dir, explicitPath: 'package.json' });
    expect(loaded).toEqual({ config: {}, filepath: path.join(dir, 'package.json'), warnings: [] });
  });

  it('refuses a missing file, naming it', async () => {
    const dir = tempRoot();
    const error = await asyncUsageErrorOf(() => loadConfigFile({ cwd: dir, explicitPath: 'nope.json' }));
    expect(error.message).toBe(`Configuration file not found: ${path.join(dir, 'nope.json')}`);
    expect(error.hint).toContain('--config');
  });

  it('refuses a folder', async () => {
    const dir = tempRoot();
    fs.mkdirSync(path.join(dir, 'conf.json'));
    const error = await asyncUsageErrorOf(() => loadConfigFile({ cwd: dir, explicitPath: 'conf.json' }));
    expect(error.message).toContain('is a folder');
  });

  it.each(['provider.toml', 'provider.config.ts'])('refuses the unsupported format %s', async (name) => {
    const dir = tempRoot();
    writeFiles(dir, { [name]: '' });
    const error = await asyncUsageErrorOf(() => loadConfigFile({ cwd: dir, explicitPath: name }));
    expect(error.message).toContain('not supported');
    expect(error.hint).toContain('JSON');
  });
});

describe('loadConfigFile: validation', () => {
  function load(content: object | string, name = '.providerrc.json') {
    const dir = tempRoot();
    writeFiles(dir, { [name]: content });
    return { file: path.join(dir, name), result: loadConfigFile({ cwd: dir }) };
  }

  it('accepts every known key', async () => {
    const config = {
      hostname: 'tfe.example.com',
      organization: 'acme',
      namespace: 'acme-ns',
      name: 'widget',
      concurrency: 32,
      waitTimeout: '1h30m',
      protocols: ['5.0', '6.0'],
      key: 'keys/public.asc',
      color: false,
    };
    const { result } = load(config);
    expect((await result).config).toEqual(config);
  });

  it('accepts "auto" as concurrency', async () => {
    expect((await load({ concurrency: 'auto' }).result).config).toEqual({ concurrency: 'auto' });
  });

  it('accepts a number of seconds as waitTimeout', async () => {
    expect((await load({ waitTimeout: 90 }).result).config).toEqual({ waitTimeout: 90 });
  });

  it('warns about unknown keys and ignores them', async () => {
    const { file, result } = load({ name: 'x', foo: 1, wait_timeout: '5m', Organization: 'a' });
    expect(await result).toEqual({
      config: { name: 'x' },
      filepath: file,
      warnings: [
        `unknown key "foo" in ${file} (ignored)`,
        `unknown key "wait_timeout" in ${file} (ignored) (did you mean "waitTimeout"?)`,
        `unknown key "Organization" in ${file} (ignored) (did you mean "organization"?)`,
      ],
    });
  });

  it.each(['token', 'Token', 'TOKEN', 'apiToken', 'tfe_token'])('refuses a %s key', async (key) => {
    const { file, result } = load({ organization: 'acme', [key]: 'LEAKED-VALUE', foo: 1 });
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toBe(`${file} contains "${key}": a token in a configuration file is refused`);
    expect(error.hint).toContain('TF_TOKEN_<host>');
    expect(error.hint).toContain('TFE_TOKEN');
    expect(error.hint).toContain('terraform login');
    expect(JSON.stringify([error.message, error.hint])).not.toContain('LEAKED-VALUE');
  });

  it('refuses a token key in YAML too', async () => {
    const { result } = load('token: abc\n', '.providerrc.yaml');
    expect((await asyncUsageErrorOf(() => result)).message).toContain(
      'a token in a configuration file is refused',
    );
  });

  it.each([
    ['concurrency', '4', '"auto" or an integer from 1 to 32', '"4"'],
    ['concurrency', 'many', '"auto" or an integer from 1 to 32', '"many"'],
    ['concurrency', 0, '"auto" or an integer from 1 to 32', '0'],
    ['concurrency', 33, '"auto" or an integer from 1 to 32', '33'],
    ['concurrency', 2.5, '"auto" or an integer from 1 to 32', '2.5'],
    ['color', 'yes', 'true or false', '"yes"'],
    ['protocols', ['7.0'], 'a non-empty array of "4.0", "5.0" or "6.0"', '["7.0"]'],
    ['protocols', '5.0', 'a non-empty array of "4.0", "5.0" or "6.0"', '"5.0"'],
    ['protocols', [], 'a non-empty array', '[]'],
    ['waitTimeout', 'soon', 'a duration string such as "10m"', '"soon"'],
    ['waitTimeout', -1, 'a duration string such as "10m" or "1h30m", or a number of seconds', '-1'],
    ['waitTimeout', true, 'a duration string', 'true'],
    ['hostname', 42, 'a hostname or URL string', '42'],
    ['organization', '', 'a non-empty string', '""'],
    ['name', null, 'a non-empty string', 'null'],
    ['key', { path: 'x' }, 'a path string', '{"path":"x"}'],
  ])('refuses %s = %j, naming the file, key and expected type', async (key, value, expected, shown) => {
    const { file, result } = load({ [key]: value });
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toContain(file);
    expect(error.message).toContain(`"${key}" must be ${expected}`);
    expect(error.message).toContain(`(got ${shown})`);
  });

  it('reports every wrong key at once', async () => {
    const { result } = load({ concurrency: 'many', color: 'blue' });
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toContain('"concurrency" must be');
    expect(error.message).toContain('"color" must be');
    expect(error.details).toMatchObject({ keys: ['concurrency', 'color'] });
  });

  it.each([
    ['.providerrc.json', '["a"]', 'an array'],
    ['.providerrc.yaml', 'just a string\n', 'a string'],
    ['.providerrc', '42\n', 'a number'],
  ])('refuses %s holding %j', async (name, content, kind) => {
    const { file, result } = load(content, name);
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toBe(`${file} must hold an object of settings, not ${kind}`);
  });

  it('refuses malformed JSON without echoing the contents', async () => {
    const { file, result } = load('{\n  "organization": "acme",\n  "name": SECRET-ISH\n}');
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toContain(`Cannot read configuration file ${file}: it is not valid JSON`);
    expect(error.message).not.toContain('SECRET');
  });

  it('refuses malformed YAML with the line and column but no code frame', async () => {
    const { file, result } = load('a: 1\n  b: SECRET: x\n', '.providerrc.yaml');
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toContain(`Cannot read configuration file ${file}: it is not valid YAML`);
    expect(error.message).toMatch(/\(2:\d+\)/);
    expect(error.message).not.toContain('SECRET');
  });

  it('reports a JavaScript config that throws', async () => {
    const { file, result } = load('throw new Error("broken config");', 'provider.config.mjs');
    const error = await asyncUsageErrorOf(() => result);
    expect(error.message).toBe(`Cannot read configuration file ${file}: broken config`);
  });
});
