import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it, expect } from 'vitest';
import {
  credentialsFilePath,
  encodeTokenVariable,
  resolveToken,
  type ResolveTokenInput,
  type TokenSource,
} from '../../src/config/credentials.js';
import { parseHostname } from '../../src/config/hostname.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { normalise } from '../helpers/normalise.js';
import { usageErrorOf, writeFiles } from './helpers.js';

const APP = parseHostname('app.terraform.io', 'test');
const TFE_PORT = parseHostname('tfe.example.com:8443', 'test');

/** A fake home folder holding `~/.terraform.d/credentials.tfrc.json` with the given contents. */
function homeWith(credentials?: string | object): string {
  const home = tempDir();
  if (credentials !== undefined) writeFiles(home, { '.terraform.d/credentials.tfrc.json': credentials });
  return home;
}

function fileFor(host: string, token: string): object {
  return { credentials: { [host]: { token } } };
}

function resolve(input: Partial<ResolveTokenInput> & { homeDir: string }): ReturnType<typeof resolveToken> {
  return resolveToken({ apiHost: APP, env: {}, platform: 'linux', ...input });
}

describe('resolveToken precedence', () => {
  const layers = ['flag', 'TF_TOKEN', 'TFE_TOKEN', 'credentials.tfrc.json'] as const;
  // Every non-empty combination of sources: the highest present one must win.
  const combinations = Array.from({ length: 15 }, (_, i) => layers.filter((_, bit) => ((i + 1) >> bit) & 1));

  it.each(combinations.map((present) => [present.join(' + '), present] as const))(
    '%s → the first of them wins',
    (_, present) => {
      const has = (layer: TokenSource): boolean => (present as readonly string[]).includes(layer);
      const env: Record<string, string> = {};
      if (has('TF_TOKEN')) env.TF_TOKEN_app_terraform_io = 'token-from-TF_TOKEN';
      if (has('TFE_TOKEN')) env.TFE_TOKEN = 'token-from-TFE_TOKEN';
      const homeDir = homeWith(
        has('credentials.tfrc.json') ? fileFor('app.terraform.io', 'token-from-file') : undefined,
      );
      const flagToken = has('flag') ? 'token-from-flag' : undefined;
      const result = resolve({ flagToken, env, homeDir });
      const winner = present[0];
      expect(result.source).toBe(winner);
      expect(result.token).toBe(
        { flag: 'token-from-flag', TF_TOKEN: 'token-from-TF_TOKEN', TFE_TOKEN: 'token-from-TFE_TOKEN' }[
          winner as string
        ] ?? 'token-from-file',
      );
      expect(result.warning !== undefined).toBe(winner === 'flag');
    },
  );

  it('warns that a --token flag is visible, suggests the variable, and never repeats the token', () => {
    const result = resolve({ flagToken: 'sekrit.atlasv1.abc', homeDir: homeWith() });
    expect(normalise(result.warning ?? '')).toMatchInlineSnapshot(
      `"--token is visible to other users in the process list and may be kept in your shell history; set TF_TOKEN_app_terraform_io in the environment or run \`terraform login app.terraform.io\` instead."`,
    );
    expect(result.warning).not.toContain('sekrit');
  });

  it('refuses an empty --token', () => {
    const error = usageErrorOf(() => resolve({ flagToken: '  ', homeDir: homeWith() }));
    expect(error.message).toContain('--token');
    expect(error.hint).toContain('TF_TOKEN_app_terraform_io');
  });

  it('ignores empty variables and falls through to the next source', () => {
    const env = { TF_TOKEN_app_terraform_io: '', TFE_TOKEN: '   ' };
    const result = resolve({ env, homeDir: homeWith(fileFor('app.terraform.io', 'from-file')) });
    expect(result).toEqual({ token: 'from-file', source: 'credentials.tfrc.json' });
  });

  it('uses TFE_TOKEN for any host', () => {
    const result = resolve({ apiHost: TFE_PORT, env: { TFE_TOKEN: 't' }, homeDir: homeWith() });
    expect(result).toEqual({ token: 't', source: 'TFE_TOKEN' });
  });
});

describe('TF_TOKEN_<host> decoding', () => {
  it.each([
    ['TF_TOKEN_app_terraform_io', 'app.terraform.io', true],
    ['TF_TOKEN_APP_TERRAFORM_IO', 'app.terraform.io', true],
    ['TF_TOKEN_app.terraform.io', 'app.terraform.io', true],
    ['TF_TOKEN_xn____caf__dma_fr', 'café.fr', true],
    ['TF_TOKEN_xn____caf__dma_fr', 'xn--caf-dma.fr', true],
    ['TF_TOKEN_xn--caf-dma_fr', 'café.fr', true],
    ['TF_TOKEN_xn--caf-dma.fr', 'café.fr', true],
    ['TF_TOKEN_café_fr', 'café.fr', true],
    ['TF_TOKEN_tfe__dev_example_com', 'tfe-dev.example.com', true],
    ['TF_TOKEN_127_0_0_1', 'http://127.0.0.1:8080', true],
    ['TF_TOKEN_tfe_example_com', 'tfe.example.com:8443', true],
    ['TF_TOKEN_localhost:8080', 'http://localhost:8080', true],
    ['TF_TOKEN_localhost:9090', 'http://localhost:8080', false],
    ['TF_TOKEN_app_terraform_io', 'tfe.example.com', false],
    ['TF_TOKEN_tfe_dev_example_com', 'tfe-dev.example.com', false],
    ['tf_token_app_terraform_io', 'app.terraform.io', false],
    ['TF_TOKEN_', 'app.terraform.io', false],
    ['TF_TOKENS_app_terraform_io', 'app.terraform.io', false],
  ])('%s for %s → %s', (variable, host, matches) => {
    const apiHost = parseHostname(host, 'test');
    const input = {
      apiHost,
      env: { [variable]: 'the-token' },
      homeDir: homeWith(),
      platform: 'linux' as const,
    };
    if (matches) {
      expect(resolveToken(input)).toEqual({ token: 'the-token', source: 'TF_TOKEN' });
    } else {
      expect(() => resolveToken(input)).toThrow(UsageError);
    }
  });

  it('lets the variable defined last win when several name the same host', () => {
    const homeDir = homeWith();
    const first = { TF_TOKEN_app_terraform_io: 'first', 'TF_TOKEN_app.terraform.io': 'second' };
    expect(resolve({ env: first, homeDir }).token).toBe('second');
    const second = { 'TF_TOKEN_app.terraform.io': 'second', TF_TOKEN_app_terraform_io: 'first' };
    expect(resolve({ env: second, homeDir }).token).toBe('first');
    const withEmpty = { TF_TOKEN_app_terraform_io: 'first', TF_TOKEN_APP_TERRAFORM_IO: '' };
    expect(resolve({ env: withEmpty, homeDir }).token).toBe('first');
  });

  it('ignores variables for other hosts', () => {
    const env = { TF_TOKEN_tfe_example_com: 'other', TF_TOKEN_app_terraform_io: 'mine' };
    expect(resolve({ env, homeDir: homeWith() }).token).toBe('mine');
  });
});

describe('encodeTokenVariable', () => {
  it.each([
    ['app.terraform.io', 'TF_TOKEN_app_terraform_io'],
    ['xn--caf-dma.fr', 'TF_TOKEN_xn____caf__dma_fr'],
    ['tfe-dev.example.com', 'TF_TOKEN_tfe__dev_example_com'],
    ['127.0.0.1', 'TF_TOKEN_127_0_0_1'],
    ['localhost', 'TF_TOKEN_localhost'],
  ])('%s → %s', (hostname, variable) => {
    expect(encodeTokenVariable(hostname)).toBe(variable);
    // What we suggest must be what we read back.
    const apiHost = parseHostname(hostname, 'test');
    expect(resolve({ apiHost, env: { [variable]: 'x' }, homeDir: homeWith() }).source).toBe('TF_TOKEN');
  });
});

describe('credentials.tfrc.json', () => {
  it.each([
    ['linux', {}, '/home/me', '/home/me/.terraform.d/credentials.tfrc.json'],
    ['darwin', { APPDATA: 'ignored' }, '/Users/me', '/Users/me/.terraform.d/credentials.tfrc.json'],
    [
      'win32',
      { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' },
      'C:\\Users\\me',
      'C:\\Users\\me\\AppData\\Roaming\\terraform.d\\credentials.tfrc.json',
    ],
    ['win32', {}, 'C:\\Users\\me', 'C:\\Users\\me\\AppData\\Roaming\\terraform.d\\credentials.tfrc.json'],
  ] as const)('on %s with %j lives at %s', (platform, env, homeDir, expected) => {
    expect(credentialsFilePath({ platform, env, homeDir })).toBe(expected);
  });

  it('reads the Windows file through the injected reader', () => {
    const read: string[] = [];
    const result = resolveToken({
      apiHost: APP,
      env: { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' },
      homeDir: 'C:\\Users\\me',
      platform: 'win32',
      readFile: (file) => {
        read.push(file);
        return JSON.stringify(fileFor('app.terraform.io', 'win-token'));
      },
    });
    expect(result).toEqual({ token: 'win-token', source: 'credentials.tfrc.json' });
    expect(read).toEqual(['C:\\Users\\me\\AppData\\Roaming\\terraform.d\\credentials.tfrc.json']);
  });

  it.each([
    ['the host with its port first', { 'tfe.example.com:8443': 'port', 'tfe.example.com': 'bare' }, 'port'],
    [
      'the host with its port, in either order',
      { 'tfe.example.com': 'bare', 'tfe.example.com:8443': 'port' },
      'port',
    ],
    ['then the hostname', { 'tfe.example.com': 'bare', 'app.terraform.io': 'app' }, 'bare'],
    ['keys in any case', { 'TFE.Example.COM:8443': 'upper' }, 'upper'],
  ])('looks up %s', (_, entries, expected) => {
    const credentials = Object.fromEntries(Object.entries(entries).map(([host, token]) => [host, { token }]));
    const result = resolve({ apiHost: TFE_PORT, homeDir: homeWith({ credentials }) });
    expect(result).toEqual({ token: expected, source: 'credentials.tfrc.json' });
  });

  it('finds an IDN host written in Unicode', () => {
    const apiHost = parseHostname('xn--caf-dma.fr', 'test');
    expect(resolve({ apiHost, homeDir: homeWith(fileFor('café.fr', 'idn')) }).token).toBe('idn');
  });

  it.each([
    ['no file', undefined],
    ['an empty file', ''],
    ['an empty object', {}],
    ['no entry for the host', fileFor('tfe.example.com', 'other')],
    ['an entry without a token', { credentials: { 'app.terraform.io': {} } }],
    ['an entry with an empty token', fileFor('app.terraform.io', '')],
  ])('skips %s', (_, content) => {
    expect(() => resolve({ homeDir: homeWith(content) })).toThrow(/No API token was found/);
  });

  const SECRET = 'SECRET-abc.atlasv1.xyz';
  it.each([
    ['not JSON', `{"credentials": {"app.terraform.io": {"token": "${SECRET}" x}}}`, 'not valid JSON'],
    ['not JSON at all', SECRET, 'not valid JSON'],
    ['an array', `["${SECRET}"]`, 'top level must be a JSON object'],
    ['credentials not an object', `{"credentials": ["${SECRET}"]}`, '"credentials" must be a JSON object'],
    [
      'an entry that is a string',
      `{"credentials": {"app.terraform.io": "${SECRET}"}}`,
      'entry for app.terraform.io',
    ],
    ['a token that is a number', '{"credentials": {"app.terraform.io": {"token": 42}}}', 'string "token"'],
  ])('refuses a file with %s, naming the file and the problem', (_, content, problem) => {
    const homeDir = homeWith(content);
    const error = usageErrorOf(() => resolve({ homeDir }));
    expect(error.message).toContain(path.join(homeDir, '.terraform.d', 'credentials.tfrc.json'));
    expect(error.message).toContain(problem);
    expect(error.hint).toContain('terraform login app.terraform.io');
    expect(JSON.stringify([error.message, error.hint, error.details])).not.toContain('SECRET');
  });

  it('gives the line and column of a JSON syntax error', () => {
    const error = usageErrorOf(() =>
      resolve({ homeDir: homeWith('{\n  "credentials": {\n    "a": 1,\n  }\n}') }),
    );
    expect(error.message).toMatch(/line 4, column \d+/);
  });

  it('reports a file it cannot read', () => {
    const error = usageErrorOf(() =>
      resolve({
        homeDir: '/home/me',
        readFile: () => {
          throw Object.assign(new Error('denied'), { code: 'EACCES' });
        },
      }),
    );
    expect(error.message).toBe('Cannot read /home/me/.terraform.d/credentials.tfrc.json (EACCES)');
  });

  it('reads the real file system by default', () => {
    const homeDir = homeWith(fileFor('app.terraform.io', 'on-disk'));
    expect(fs.existsSync(credentialsFilePath({ env: {}, homeDir, platform: 'linux' }))).toBe(true);
    expect(resolve({ homeDir }).token).toBe('on-disk');
  });
});

describe('no token anywhere', () => {
  it.each([
    [APP, 'app.terraform.io', 'TF_TOKEN_app_terraform_io'],
    [TFE_PORT, 'tfe.example.com:8443', 'TF_TOKEN_tfe_example_com'],
    [parseHostname('café.fr', 'test'), 'xn--caf-dma.fr', 'TF_TOKEN_xn____caf__dma_fr'],
  ])('names %# the host, `terraform login` and the variable', (apiHost, host, variable) => {
    const error = usageErrorOf(() => resolve({ apiHost, homeDir: homeWith() }));
    expect(error.message).toBe(`No API token was found for ${host}.`);
    expect(error.hint).toContain(`terraform login ${host}`);
    expect(error.hint).toContain(variable);
    expect(error.hint).toContain('TFE_TOKEN');
  });

  it('never puts a token into any message, hint, detail or warning', () => {
    const token = 'tok-7f3a9c.atlasv1.SHOULD-NOT-LEAK';
    const texts: string[] = [];
    const collect = (action: () => { warning?: string }): void => {
      try {
        texts.push(action().warning ?? '');
      } catch (error) {
        const e = error as UsageError;
        texts.push(e.message, e.hint ?? '', JSON.stringify(e.details ?? {}));
      }
    };
    const env = { TF_TOKEN_tfe_example_com: token, TF_TOKEN_other_host: token };
    collect(() => resolve({ flagToken: token, homeDir: homeWith() }));
    collect(() => resolve({ env, homeDir: homeWith() }));
    collect(() => resolve({ env, homeDir: homeWith(fileFor('tfe.example.com', token)) }));
    collect(() =>
      resolve({ env, homeDir: homeWith(`{"credentials": {"app.terraform.io": {"token": "${token}"`) }),
    );
    collect(() => resolve({ env, homeDir: homeWith(`{"credentials": {"app.terraform.io": "${token}"}}`) }));
    collect(() => resolve({ env, homeDir: homeWith(token) }));
    expect(texts.length).toBeGreaterThanOrEqual(6);
    for (const text of texts) expect(text).not.toContain('SHOULD-NOT-LEAK');
  });
});
