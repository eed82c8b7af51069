/**
 * The handler's environment holds exactly what the integrator inherited, less its own secrets: the variables
 * that name them, and values that hold a secret (`holdsSecret`): as a whole piece of the value (a URL's password, a
 * `key=value`'s value, a word), URL-decoded or not, or anywhere when it is long enough to tell. A short HMAC key or
 * database password (one letter) removes the values where it stands as a piece, not every value with that letter
 * in it: a `lock check` handler keeps the registry token it needs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONTAINED_SECRET_MIN, holdsSecret, withoutDatabaseEnv } from '../../../src/runtask/server/redact.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { bytesOf, post, requestFor, sign, startTestIntegrator, type TestIntegrator } from '../helpers.js';
import { TestPlatform } from '../platform.js';

let platform: TestPlatform;
let t: TestIntegrator | undefined;

beforeAll(async () => {
  platform = await TestPlatform.start();
});
afterAll(async () => {
  await platform.close();
});
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** A registry token as `terraform login` writes it, with every lowercase letter in it. */
const REGISTRY_TOKEN = 'abcdefghijklmnopqrstuvwxyz.atlasv1.0123456789';

describe('the handler environment with a one-letter HMAC key', () => {
  it('keeps the registry token and every other value holding that letter; removes the key', async () => {
    const key = 'k';
    t = await startTestIntegrator(platform, {
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
