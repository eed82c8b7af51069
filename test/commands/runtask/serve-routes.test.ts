/**
 * `provider runtask serve --routes <file>`: a routes file checked before anything listens (exit 2 naming the
 * file, the route and the field; a key in the file refused without echoing it), the single-route flags refused
 * beside it, and a live integrator from a YAML file judged by `runtask send` on each route: each route runs its
 * own handler with its own key (one from a variable, one from a file) and refuses the other's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runServe } from '../../../src/commands/runtask/serve.js';
import type { LogEvent } from '../../../src/runtask/server/log.js';
import { Output } from '../../../src/ui/output.js';
import { Capture, coreContext, runCli } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { post, sign } from '../../runtask/helpers.js';
import { freePort, sendCli } from '../../runtask/send/helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

let files = 0;
/** Writes a routes file (and any key files) in a fresh folder; returns its path. */
function routesFile(name: string, text: string, extra: Record<string, string> = {}): string {
  const folder = join(dir, `case-${++files}`);
  mkdirSync(folder);
  for (const [file, content] of Object.entries(extra)) writeFileSync(join(folder, file), content);
  writeFileSync(join(folder, name), text);
  return join(folder, name);
}

/** Runs serve with an already-fired signal: it starts, prints, and stops at once. */
function serve(args: string[], env: Record<string, string> = {}): ReturnType<typeof runCli> {
  const stopped = new AbortController();
  stopped.abort('SIGTERM');
  return runCli(['runtask', 'serve', '--port', '0', '--state-dir', join(dir, `state-${++files}`), ...args], {
    env,
    cwd: dir,
    signal: stopped.signal,
  });
}

const A = 'path: /a\n    hmac-key-env: A_KEY\n    exec: "true"';

describe('runtask serve --routes: a bad file is exit 2 before anything listens', () => {
  it.each([
    [
      'YAML that does not parse',
      'routes.yaml',
      'routes:\n  - path: /a\n   exec: x\n',
      /Invalid routes file \S*routes\.yaml: it is not valid YAML \(.*line 3, column 1/,
    ],
    [
      'JSON that does not parse',
      'routes.json',
      '{"routes": [',
      /Invalid routes file \S*routes\.json: it is not valid JSON/,
    ],
    ['no routes', 'routes.yaml', 'routes: []\n', /routes\.yaml: "routes" must be a non-empty list/],
    [
      'an unknown top-level field',
      'routes.yaml',
      `routes:\n  - ${A}\ndefaults: {}\n`,
      /unknown top-level field "defaults"/,
    ],
    [
      'a route without a key source',
      'routes.yaml',
      'routes:\n  - path: /a\n    exec: "true"\n',
      /routes\.yaml: route 1 \(\/a\): no HMAC key: give "hmac-key-file" .* or "hmac-key-env"/,
    ],
    [
      'both key sources',
      'routes.yaml',
      `routes:\n  - ${A}\n    hmac-key-file: a.key\n`,
      /route 1 \(\/a\): give "hmac-key-file" or "hmac-key-env", not both/,
    ],
    [
      'a duplicate path (after normalising)',
      'routes.yaml',
      `routes:\n  - ${A}\n  - path: /x/../a\n    hmac-key-env: A_KEY\n    exec: "false"\n`,
      /route 2 \(\/x\/\.\.\/a\): "path" \/a is route 1's too/,
    ],
    [
      'an unknown field, with a suggestion',
      'routes.yaml',
      `routes:\n  - ${A}\n    max_jobs: 2\n`,
      /route 1 \(\/a\): unknown field "max_jobs" \(did you mean "max-jobs"\?\)/,
    ],
    [
      'a misspelt key source',
      'routes.json',
      JSON.stringify({ routes: [{ path: '/a', exec: 'true', 'hmac-key-flie': 'a.key' }] }),
      /routes\.json: route 1 \(\/a\): unknown field "hmac-key-flie"/,
    ],
    [
      'a field of the wrong type',
      'routes.yaml',
      `routes:\n  - ${A}\n  - path: /b\n    hmac-key-env: A_KEY\n    exec: "true"\n    timeout: soon\n`,
      /route 2 \(\/b\): "timeout" must be a duration string such as "20m"/,
    ],
    [
      'a missing handler',
      'routes.yaml',
      'routes:\n  - path: /a\n    hmac-key-env: A_KEY\n',
      /route 1 \(\/a\): "exec" is missing: it must be a non-empty command string/,
    ],
    [
      'a path of the integrator’s own',
      'routes.yaml',
      'routes:\n  - path: /metrics\n    hmac-key-env: A_KEY\n    exec: "true"\n',
      /route 1 \(\/metrics\): "path" \/metrics is the integrator's own/,
    ],
    [
      'a path with a trailing slash',
      'routes.yaml',
      'routes:\n  - path: /a/\n    hmac-key-env: A_KEY\n    exec: "true"\n',
      /route 1 \(\/a\/\): "path" may not end with \//,
    ],
    [
      'a key variable that is not set',
      'routes.yaml',
      'routes:\n  - path: /a\n    hmac-key-env: NOT_SET_KEY\n    exec: "true"\n',
      /route 1 \(\/a\): "hmac-key-env" names NOT_SET_KEY, which is not set/,
    ],
    [
      'a key file that is not there',
      'routes.yaml',
      'routes:\n  - path: /a\n    hmac-key-file: missing.key\n    exec: "true"\n',
      /route 1 \(\/a\): cannot read the HMAC key file \S*missing\.key: ENOENT/,
    ],
    [
      'a with-configuration that is not true or false',
      'routes.yaml',
      `routes:\n  - ${A}\n    with-configuration: "yes"\n`,
      /route 1 \(\/a\): "with-configuration" must be true or false \(got "yes"\)/,
    ],
    [
      'a bad platform host',
      'routes.yaml',
      `routes:\n  - ${A}\n    platform-hosts: ["ftp://x"]\n`,
      /route 1 \(\/a\): "platform-hosts": "ftp:\/\/x" is not a valid hostname/,
    ],
  ])('%s', async (_name, file, text, message) => {
    const path = routesFile(file, text);
    const result = await serve(['--routes', path], { A_KEY: 'a-key' });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain(path);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('serve.started');
  });

  it('refuses a key written in the file without echoing it', async () => {
    const path = routesFile(
      'routes.yaml',
      'routes:\n  - path: /a\n    hmac-key: s3cret-in-file\n    exec: "true"\n',
    );
    const result = await serve(['--routes', path]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(
      /route 1 \(\/a\): "hmac-key": a key or token in the routes file is refused/,
    );
    expect(result.stderr).not.toContain('s3cret-in-file');
  });

  it('names the file, route and field in the --json error document', async () => {
    const path = routesFile('routes.yaml', `routes:\n  - ${A}\n    max_jobs: 2\n`);
    const result = await serve(['--routes', path, '--json'], { A_KEY: 'a-key' });
    expect(result.exitCode).toBe(2);
    const document = JSON.parse(result.stdout || result.stderr) as { error: { details: unknown } };
    expect(document.error.details).toEqual({ file: path, route: 1, path: '/a', field: 'max_jobs' });
  });

  it('says a missing file is missing', async () => {
    const result = await serve(['--routes', 'nope.yaml']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/routes file not found: nope\.yaml/);
  });

  it.each([[['--exec', 'true']], [['--path', '/x']], [['--hmac-key-env', 'A_KEY']]])(
    'refuses %j beside --routes',
    async (flags) => {
      const path = routesFile('routes.yaml', `routes:\n  - ${A}\n`);
      const result = await serve(['--routes', path, ...flags], { A_KEY: 'a-key' });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`--routes and ${flags[0]} cannot be given together`));
      expect(result.stdout).toBe('');
    },
  );
});

describe('how handlers output is read: --result-format, --fail-on and the routes fields', () => {
  it('a value outside the lists is exit 2 naming the flag or the route field, before anything listens', async () => {
    const flag = await serve(['--exec', 'true', '--result-format', 'xml'], { RUNTASK_HMAC_KEY: 'k' });
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toContain(
      '--result-format must be one of auto, json, exit-code, sarif, junit, got "xml"',
    );
    const failOn = await serve(['--exec', 'true', '--fail-on', 'critical'], { RUNTASK_HMAC_KEY: 'k' });
    expect(failOn.exitCode).toBe(2);
    expect(failOn.stderr).toContain('--fail-on must be one of error, warning, note, never, got "critical"');
    const file = routesFile('routes.yaml', `routes:\n  - ${A}\n    fail-on: critical\n`);
    const route = await serve(['--routes', file], { A_KEY: 'a' });
    expect(route.exitCode).toBe(2);
    expect(route.stderr).toContain('route 1 (/a)');
    expect(route.stderr).toContain('"fail-on" must be one of error, warning, note, never, got "critical"');
    expect(route.stdout).not.toContain('listening');
  });
});

describe('runtask serve --routes with a PostgreSQL job store', () => {
  it('opens a queue per route on the database: one that cannot be reached is exit 2, from the flag or the variable, password unshown', async () => {
    const url = 'postgres://runtask:s3cret-pw@127.0.0.1:1/runtask';
    const file = routesFile('routes.yaml', `routes:\n  - ${A}\n`);
    for (const [args, env] of [
      [['--database-url', url], {}],
      [[], { RUNTASK_DATABASE_URL: url }],
    ] as const) {
      const result = await serve(['--routes', file, ...args], { A_KEY: 'a', ...env });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('cannot use the database postgres://runtask:***@127.0.0.1:1/runtask');
      expect(result.stdout + result.stderr).not.toContain('s3cret-pw');
      expect(result.stdout).not.toContain('listening');
    }
  });
});

describe('runtask serve --routes serving', () => {
  it('prints each route it listens on; --json lists them without any key', async () => {
    const path = routesFile(
      'routes.yaml',
      `routes:\n  - ${A}\n  - path: /tenants/b\n    hmac-key-file: b.key\n    exec: "false"\n    max-jobs: 2\n`,
      { 'b.key': 'b-key-in-a-file\n' },
    );
    const plain = await serve(['--routes', path], { A_KEY: 'a-key-in-env' });
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toMatch(
      /^provider runtask serve listening for 2 run tasks:\n {2}http:\/\/127\.0\.0\.1:\d+\/a\n {2}http:\/\/127\.0\.0\.1:\d+\/tenants\/b\n$/,
    );
    expect(plain.stderr).not.toContain('serve.unauthenticated');

    const json = await serve(['--routes', path, '--json'], { A_KEY: 'a-key-in-env' });
    const started = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(started).toMatchObject({
      hmac: true,
      routes: [
        { path: '/a', maxJobs: 4, platformHosts: ['https://app.terraform.io'] },
        { path: '/tenants/b', maxJobs: 2 },
      ],
    });
    expect(started.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    for (const text of [json.stdout, json.stderr, plain.stderr]) {
      expect(text).not.toContain('a-key-in-env');
      expect(text).not.toContain('b-key-in-a-file');
    }
  });

  it('each route runs its own handler with its own key and refuses the other’s, judged by runtask send', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const path = routesFile(
      'routes.yaml',
      [
        'routes:',
        '  - path: /policy-a',
        '    hmac-key-env: POLICY_A_KEY',
        '    exec: echo "checked by handler A"',
        `    platform-hosts: ["http://127.0.0.1:${portA}"]`,
        '  - path: /tenants/b',
        '    hmac-key-file: keys/b.key',
        '    exec: echo "checked by handler B"; exit 1',
        `    platform-hosts: ["http://127.0.0.1:${portB}"]`,
        '',
      ].join('\n'),
      {},
    );
    mkdirSync(join(path, '..', 'keys'));
    writeFileSync(join(path, '..', 'keys', 'b.key'), 'key-of-b\n');
    const controller = new AbortController();
    const output = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} });
    const events: LogEvent[] = [];
    let started: (url: string) => void = () => undefined;
    const listening = new Promise<string>((resolve) => (started = resolve));
    const context = coreContext(output, {
      env: { PATH: process.env.PATH, POLICY_A_KEY: 'key-of-a' },
      cwd: dir,
      tmpDir: dir,
      signal: controller.signal,
    });
    const done = runServe(
      context,
      {
        host: '127.0.0.1',
        port: '0',
        routes: path,
        heartbeat: '4m',
        timeout: '20s',
        maxJobs: '4',
        grace: '5s',
        callbackTimeout: '10s',
        stateDir: join(dir, 'live-state'),
      },
      (log) =>
        log.subscribe((event) => {
          events.push(event);
          if (event.event === 'serve.started') started(String(event.fields.url));
        }),
    );
    const base = await Promise.race([listening, done.then(() => Promise.reject(new Error('serve stopped')))]);
    try {
      const a = new URL('/policy-a', base).href;
      const b = new URL('/tenants/b', base).href;
      const passed = await sendCli(a, portA, ['--expect', 'passed'], { RUNTASK_HMAC_KEY: 'key-of-a' });
      expect(passed.exitCode, passed.stderr).toBe(0);
      expect(passed.stdout).toContain('checked by handler A');
      const failed = await sendCli(b, portB, ['--expect', 'failed'], { RUNTASK_HMAC_KEY: 'key-of-b' });
      expect(failed.exitCode, failed.stderr).toBe(0);
      expect(failed.stdout).toContain('checked by handler B');

      // Signed with the other route's key: refused on both, no handler started.
      const body = JSON.stringify({ payload_version: 1, stage: 'post_plan', run_id: 'run-crossed' });
      expect((await post(a, body, sign(body, 'key-of-b'))).status).toBe(401);
      expect((await post(b, body, sign(body, 'key-of-a'))).status).toBe(401);
      const refused = events.filter((e) => e.event === 'request.rejected' && e.fields.http === 401);
      expect(refused.map((e) => e.fields.route)).toEqual(['/policy-a', '/tenants/b']);
      expect(events.filter((e) => e.event === 'handler.started').map((e) => e.fields.route)).toEqual([
        '/policy-a',
        '/tenants/b',
      ]);
    } finally {
      controller.abort('SIGTERM');
      expect(await done).toBe(0);
    }
  });
});
