/**
 * The handler's environment holds exactly what the integrator inherited, less its own secrets: the variables
 * that name them, and values that hold a secret (`holdsSecret`): as a whole piece of the value (a URL's password, a
 * `key=value`'s value, a word), URL-decoded or not, or anywhere when it is long enough to tell. A short HMAC key or
 * database password (one letter) removes the values where it stands as a piece, not every value with that letter
 * in it: a `lock check` handler keeps the registry token it needs.
 */
import { describe, expect, it } from 'vitest';
import {
  removedFromHandlers,
  type CheckInput,
  type CheckSettings,
} from '../../../src/runtask/server/check/check.js';
import {
  CONTAINED_SECRET_MIN,
  databaseEnvRemoved,
  holdsSecret,
  withoutDatabaseEnv,
} from '../../../src/runtask/server/redact.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { bytesOf, integratorsPerTest, post, requestFor, sign } from '../helpers.js';
import { TestPlatform } from '../platform.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);

/** A registry token as `terraform login` writes it, with every lowercase letter in it. */
const REGISTRY_TOKEN = 'abcdefghijklmnopqrstuvwxyz.atlasv1.0123456789';

describe('the handler environment with a one-letter HMAC key', () => {
  it('keeps the registry token and every other value holding that letter; removes the key', async () => {
    const key = 'k';
    const t = await startIntegrator({
      hmacKey: key,
      env: {
        PATH: process.env.PATH,
        TEST_PLATFORM_URL: platform.url,
        RUNTASK_HMAC_KEY: key,
        TF_TOKEN_registry_example_com: REGISTRY_TOKEN,
        WORKSPACE_KIND: 'kubernetes',
        COPY_OF_THE_KEY: key,
      },
    });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const body = bytesOf(request);
    expect((await post(t.integrator.url, body, sign(body, key))).status).toBe(200);
    const report = await platform.waitForHandler(request.run_id);
    platform.release(request.run_id, { stdout: 'ok\n', exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');

    expect(report.env).toMatchObject({
      TF_TOKEN_registry_example_com: REGISTRY_TOKEN,
      WORKSPACE_KIND: 'kubernetes',
      TEST_PLATFORM_URL: platform.url,
    });
    expect(report.env).not.toHaveProperty('RUNTASK_HMAC_KEY');
    expect(report.env).not.toHaveProperty('COPY_OF_THE_KEY');
    for (const [name, value] of Object.entries(report.env)) {
      expect(value, name).not.toContain(String(request.access_token));
    }
  });

  it('logs the names of the variables handlers do not get, never their values, once', async () => {
    const key = 'a-key-the-test-knows';
    const t = await startIntegrator({
      hmacKey: key,
      env: {
        PATH: process.env.PATH,
        TEST_PLATFORM_URL: platform.url,
        RUNTASK_HMAC_KEY: key,
        APP_SETTINGS: `{"signing":"${key}"}`,
        RUNTASK_LEFT_OVER: 'from a parent',
      },
    });
    for (let n = 0; n < 2; n++) {
      const request = requestFor(POST_PLAN_REQUEST, platform);
      const body = bytesOf(request);
      expect((await post(t.integrator.url, body, sign(body, key))).status).toBe(200);
      await platform.waitForHandler(request.run_id);
      platform.release(request.run_id, { stdout: 'ok\n', exitCode: 0 });
      await platform.waitForCallbacks(request.task_result_id, 'passed');
    }
    const logged = t.events.filter((e) => e.event === 'handler.env_removed');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: 'info',
      fields: { names: 'APP_SETTINGS,RUNTASK_HMAC_KEY,RUNTASK_LEFT_OVER' },
      msg: 'handlers do not get these variables: APP_SETTINGS, RUNTASK_HMAC_KEY, RUNTASK_LEFT_OVER',
    });
    expect(JSON.stringify(t.events)).not.toContain(key);
  });
});

describe('holdsSecret and withoutDatabaseEnv', () => {
  it('a value holds a secret that is a whole piece of it, or anywhere in it when the secret is long enough', () => {
    const long = 'x'.repeat(CONTAINED_SECRET_MIN);
    expect(holdsSecret('k', ['k'])).toBe(true);
    expect(holdsSecret('kubernetes', ['k'])).toBe(false);
    expect(holdsSecret(REGISTRY_TOKEN, ['k'])).toBe(false);
    expect(holdsSecret(`key=${long}`, [long])).toBe(true);
    expect(holdsSecret(`word${long}word`, [long])).toBe(true);
    // Shorter than CONTAINED_SECRET_MIN: a whole piece still counts, part of a word does not.
    expect(holdsSecret(`key=${long.slice(1)}`, [long.slice(1)])).toBe(true);
    expect(holdsSecret(`word${long.slice(1)}`, [long.slice(1)])).toBe(false);
    expect(holdsSecret('KEYS=k:abc', ['k'])).toBe(true);
    expect(holdsSecret('k:abc', ['k'])).toBe(true);
    expect(holdsSecret('one two k', ['k'])).toBe(true);
    expect(holdsSecret('postgres://u:pw12345@h/db', ['pw12345'])).toBe(true);
    expect(holdsSecret('postgres://h/db?sslmode=require&password=pw12345', ['pw12345'])).toBe(true);
    // Percent-encoded in a URL, or holding separators itself.
    expect(holdsSecret('postgres://u:p%40s%3As@h/db', ['p@s:s'])).toBe(true);
    expect(holdsSecret('https://h/?token=a%20b', ['a b'])).toBe(true);
    expect(holdsSecret('anything', [''])).toBe(false);
  });

  it('a short secret is a piece wherever a character other than a letter or digit bounds it', () => {
    const basic = `Basic ${Buffer.from('u:hunter2').toString('base64')}`;
    for (const value of [
      '{"password":"hunter2"}',
      "DB_PASS='hunter2'",
      '[hunter2]',
      'hunter2|x',
      'x=hunter2#frag',
      '<hunter2>',
      'a.hunter2.b',
      basic,
      `{"auths":{"registry.example.com":{"auth":"${Buffer.from('ci:hunter2').toString('base64')}"}}}`,
    ])
      expect(holdsSecret(value, ['hunter2']), value).toBe(true);
    // Inside a word (letters or digits on a side) it is not looked for: too short to tell.
    for (const value of ['xhunter2', 'hunter2x', 'hunter22', 'Basic eGh1bnRlcjI=' /* "xhunter2" */])
      expect(holdsSecret(value, ['hunter2']), value).toBe(false);
    // A secret that starts or ends with punctuation needs no boundary on that side.
    expect(holdsSecret('x-pw!y', ['-pw!'])).toBe(true);
    // A random token (base64 or not) is never read as base64 text, nor does a one-letter key stand in it.
    expect(holdsSecret('dGhpc2lzbm90YXRva2Vu9f8Kq3Zx+/Ab==', ['k'])).toBe(false);
    expect(holdsSecret(REGISTRY_TOKEN, ['k', 'a', 'z'])).toBe(false);
  });

  it('a secret is found inside a word only from 16 characters on', () => {
    expect(CONTAINED_SECRET_MIN).toBe(16);
    const sixteen = 'S3cr3tK3yS3cr3tK';
    expect(holdsSecret(`word${sixteen}word`, [sixteen])).toBe(true);
    expect(holdsSecret(`word${sixteen.slice(1)}word`, [sixteen.slice(1)])).toBe(false);
  });

  it('a common database password leaves PATH and HOME alone, and removes values that are it or hold it whole', () => {
    const url = 'postgres://app:postgres@db/x';
    const env = withoutDatabaseEnv(
      {
        PATH: '/usr/lib/postgresql/16/bin:/usr/bin',
        HOME: '/var/lib/postgresql',
        PGHOST: 'db',
        EQUAL: 'postgres',
        AS_A_FOLDER: '/var/lib/postgres/data',
        IN_JSON: '{"db":{"password":"postgres"}}',
        RUNTASK_HMAC_KEY: 'k',
        KEYS: 'k:x',
      },
      url,
    );
    expect(env).toEqual({
      PATH: '/usr/lib/postgresql/16/bin:/usr/bin',
      HOME: '/var/lib/postgresql',
      RUNTASK_HMAC_KEY: 'k',
      KEYS: 'k:x',
    });
    expect(databaseEnvRemoved(env)).toEqual(['PGHOST', 'EQUAL', 'AS_A_FOLDER', 'IN_JSON']);
    // What handlers miss, for the log: the database's removals and the HMAC key's, names only.
    const settings = { env, secretEnvNames: ['RUNTASK_HMAC_KEY'], hmacKey: 'k' } as unknown as CheckSettings;
    const input = {
      id: 'j',
      request: { access_token: 'a-token-for-this-run' },
      raw: {},
    } as unknown as CheckInput;
    expect(removedFromHandlers(settings, input)).toEqual([
      'AS_A_FOLDER',
      'EQUAL',
      'IN_JSON',
      'KEYS',
      'PGHOST',
      'RUNTASK_HMAC_KEY',
    ]);
  });

  it('a short database password inside a URL or a key=value is removed with its variable', () => {
    const url = 'postgres://u:pw12345@db/x';
    expect(
      withoutDatabaseEnv(
        { DATABASE_URL: url, KEYS: 'a:pw12345', PATH: '/usr/bin:/bin', TOKEN: 'xpw12345' },
        url,
      ),
    ).toEqual({ PATH: '/usr/bin:/bin', TOKEN: 'xpw12345' });
  });

  it('a one-letter database password removes the PG* variables and its equal, not every value with the letter', () => {
    const env = withoutDatabaseEnv(
      {
        PGPASSWORD: 'p',
        PGP_KEY_ID: 'kept',
        TF_TOKEN_app_terraform_io: 'pppp.atlasv1.pppp',
        JUST_THE_PASSWORD: 'p',
        APP_DATABASE: 'postgres://u:a-longer-password@db/x',
      },
      'postgres://u:p@db/x',
    );
    expect(env).toEqual({
      PGP_KEY_ID: 'kept',
      TF_TOKEN_app_terraform_io: 'pppp.atlasv1.pppp',
      APP_DATABASE: 'postgres://u:a-longer-password@db/x',
    });
    // A password long enough to tell is removed wherever it stands (a URL that holds it).
    const long = withoutDatabaseEnv(
      { APP_DATABASE: 'postgres://u:a-longer-password@db/x', OTHER: 'fine' },
      'postgres://u:a-longer-password@db/x',
    );
    expect(long).toEqual({ OTHER: 'fine' });
  });
});
