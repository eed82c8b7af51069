/**
 * `provider emulate` spawned exactly as a user runs it: `node bin/provider.cjs emulate --port 0 --json` prints one
 * JSON line (url, organization, tokens), serves, and exits 0 on SIGINT and on SIGTERM; a bad `--faults` file
 * exits 2 naming the file; `--data-dir` and `--request-log` work from the command line.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectStatus, providerPaths, providerPayload } from '../helpers/emulator/index.js';
import { arr, isObject, str } from '../helpers/json.js';
import { cliPerTest, ensureBuilt } from '../helpers/spawn-cli.js';
import { tempDir } from '../helpers/tmp.js';

let dir: string;
/** `provider <args>` started in `dir`, killed after the test if it is still running. */
const startCli = cliPerTest();

beforeAll(() => {
  ensureBuilt();
  dir = tempDir();
}, 120_000);

interface Started {
  url: string;
  organization: string;
  ownerToken: string;
  memberToken: string;
}

function parseStarted(line: string): Started {
  const doc = JSON.parse(line) as unknown;
  if (!isObject(doc)) throw new Error(`not a JSON object: ${line}`);
  return {
    url: str(doc, 'url'),
    organization: str(doc, 'organization'),
    ownerToken: str(doc, 'ownerToken'),
    memberToken: str(doc, 'memberToken'),
  };
}

describe('provider emulate --port 0 --json', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'prints one JSON line, serves, and exits 0 on %s',
    async (signal) => {
      const run = startCli(['emulate', '--port', '0', '--json'], dir);
      const started = parseStarted(await run.firstLine);
      expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(started.organization).toBe('example-org');
      expect(started.ownerToken).not.toBe(started.memberToken);

      const ping = await call(started.url, 'GET', '/api/v2/ping');
      expectStatus(ping, 204);
      const list = await call(started.url, 'GET', providerPaths(started.organization, 'x').providers, {
        token: started.ownerToken,
      });
      expectStatus(list, 200);
      expect(arr(list.json, 'data')).toEqual([]);
      expectStatus(await call(started.url, 'GET', providerPaths(started.organization, 'x').providers), 401);

      run.child.kill(signal);
      expect(await run.exit).toEqual({ code: 0, signal: null });
      const lines = run
        .stdout()
        .split('\n')
        .filter((l) => l.length > 0);
      expect(lines).toHaveLength(1);
      // The tokens are printed once, on stdout, by request: never on stderr.
      expect(run.stderr()).not.toContain(started.ownerToken);
    },
  );
});

describe('provider emulate --faults with a bad file', () => {
  it.each([
    ['not JSON', '[{"status": 500', /not valid JSON/],
    [
      'a bad rule',
      '[{"path": "/x", "status": 500}, {"path": "/y", "bogus": true}]',
      /rule 2: unknown field "bogus"/,
    ],
  ])('%s: exit 2 with a message naming the file', async (_name, text, message) => {
    const file = join(dir, `faults-${_name.replace(/\W+/g, '-')}.json`);
    writeFileSync(file, text);
    const run = startCli(['emulate', '--port', '0', '--faults', file], dir);
    const { code } = await run.exit;
    expect(code).toBe(2);
    expect(run.stderr()).toContain(file);
    expect(run.stderr()).toMatch(message);
    expect(run.stdout()).toBe('');
  });

  it('a missing file: exit 2 naming it', async () => {
    const file = join(dir, 'no-such-faults.json');
    const run = startCli(['emulate', '--port', '0', '--faults', file], dir);
    expect((await run.exit).code).toBe(2);
    expect(run.stderr()).toContain(file);
  });

  it('with --json: exit 2 and one JSON error document on stdout naming the file', async () => {
    const file = join(dir, 'faults-json.json');
    writeFileSync(file, '{"rules": 3}');
    const run = startCli(['emulate', '--port', '0', '--json', '--faults', file], dir);
    expect((await run.exit).code).toBe(2);
    const lines = run
      .stdout()
      .split('\n')
      .filter((l) => l.length > 0);
    expect(lines).toHaveLength(1);
    const doc = JSON.parse(lines[0]!) as unknown;
    expect(doc).toMatchObject({ ok: false, error: { code: 'usage' } });
    expect(str(doc, 'error.message')).toContain(file);
  });

  it('a good faults file is applied', async () => {
    const file = join(dir, 'faults-good.json');
    writeFileSync(
      file,
      JSON.stringify({ seed: 3, rules: [{ path: '/api/v2/ping', status: 503, times: 1 }] }),
    );
    const run = startCli(['emulate', '--port', '0', '--json', '--faults', file], dir);
    const started = parseStarted(await run.firstLine);
    expectStatus(await call(started.url, 'GET', '/api/v2/ping'), 503);
    expectStatus(await call(started.url, 'GET', '/api/v2/ping'), 204);
    run.child.kill('SIGTERM');
    expect((await run.exit).code).toBe(0);
  });
});

describe('provider emulate --data-dir --request-log', () => {
  it('writes the JSONL log (no token) and keeps state in the data dir across runs', async () => {
    const dataDir = join(dir, 'state');
    const logFile = join(dir, 'requests.jsonl');
    const first = startCli(
      ['emulate', '--port', '0', '--json', '--data-dir', 'state', '--request-log', 'requests.jsonl'],
      dir,
    );
    const started = parseStarted(await first.firstLine);
    const created = await call(started.url, 'POST', providerPaths(started.organization, 'cli').providers, {
      token: started.ownerToken,
      body: providerPayload(started.organization, 'cli'),
    });
    expectStatus(created, 201);
    expectStatus(
      await call(started.url, 'GET', providerPaths(started.organization, 'cli').provider, {
        token: started.memberToken,
      }),
      200,
    );
    first.child.kill('SIGTERM');
    expect((await first.exit).code).toBe(0);

    expect(existsSync(join(dataDir, 'state.json'))).toBe(true);
    const log = readFileSync(logFile, 'utf8');
    const records = log
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as unknown);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ method: 'POST', status: 201, authorization: true });
    expect(records[1]).toMatchObject({ method: 'GET', status: 200, authorization: true });
    expect(log).not.toContain(started.ownerToken);
    expect(log).not.toContain(started.memberToken);

    const second = startCli(
      ['emulate', '--port', '0', '--json', '--data-dir', dataDir, '--request-log', logFile],
      dir,
    );
    const again = parseStarted(await second.firstLine);
    expect(again.ownerToken).toBe(started.ownerToken);
    expect(again.memberToken).toBe(started.memberToken);
    const provider = await call(again.url, 'GET', providerPaths(again.organization, 'cli').provider, {
      token: again.ownerToken,
    });
    expectStatus(provider, 200);
    expect(str(provider.json, 'data.id')).toBe(str(created.json, 'data.id'));
    second.child.kill('SIGINT');
    expect((await second.exit).code).toBe(0);
    expect(
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    ).toHaveLength(3);
  });
});
