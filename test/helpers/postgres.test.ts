/**
 * The test PostgreSQL server (postgres.ts): it starts on 127.0.0.1 with a password, answers a query through the
 * `pg` driver, refuses a wrong password, and is gone (folder and all) after `stop()`. Also the library links the
 * binaries package's postinstall script makes: made again when missing (npm 11 may not have run it).
 */
import { existsSync, lstatSync, mkdtempSync, mkdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hydrateEmbeddedPostgresLinks } from '../../scripts/embedded-postgres-links.mjs';
import { startPostgres, type TestPostgres } from './postgres.js';

let server: TestPostgres;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe('the test PostgreSQL server', () => {
  it('answers on 127.0.0.1 with its password, and refuses another', async () => {
    expect(server.url).toMatch(/^postgres:\/\/postgres:[0-9a-f]{24}@127\.0\.0\.1:\d+\/postgres$/);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query<{ answer: number; version: string }>(
      'SELECT 1 + 1 AS answer, version() AS version',
    );
    await client.end();
    expect(rows[0]).toMatchObject({ answer: 2 });
    expect(rows[0]!.version).toMatch(/^PostgreSQL 17\./);

    const wrong = new pg.Client({ connectionString: server.url.replace(server.password, 'wrong') });
    await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);
  });

  it('makes another database on request', async () => {
    await server.createDatabase('second');
    const client = new pg.Client({ connectionString: server.urlOf('second') });
    await client.connect();
    const { rows } = await client.query<{ db: string }>('SELECT current_database() AS db');
    await client.end();
    expect(rows[0]!.db).toBe('second');
  });
});

describe('the library links of the binaries package', () => {
  it('are made when missing, relative, and left alone when there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'provider-pg-links-'));
    try {
      mkdirSync(join(dir, 'native', 'lib'), { recursive: true });
      writeFileSync(join(dir, 'native', 'lib', 'libpq.so.5.17'), 'library');
      writeFileSync(
        join(dir, 'native', 'pg-symlinks.json'),
        JSON.stringify([
          { source: 'native/lib/libpq.so.5.17', target: 'native/lib/libpq.so.5' },
          { source: 'native/lib/libpq.so.5.17', target: 'native/lib/libpq.so' },
        ]),
      );
      expect(hydrateEmbeddedPostgresLinks(dir)).toEqual(['native/lib/libpq.so.5', 'native/lib/libpq.so']);
      expect(lstatSync(join(dir, 'native', 'lib', 'libpq.so.5')).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(dir, 'native', 'lib', 'libpq.so.5'))).toBe('libpq.so.5.17');
      expect(existsSync(join(dir, 'native', 'lib', 'libpq.so'))).toBe(true);
      expect(hydrateEmbeddedPostgresLinks(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
