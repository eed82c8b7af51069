/**
 * Answers of the wrong shape (`{"data":null}`, `attributes: null`, HTML with a 200, an array for an object, a
 * created resource without its upload links…), sent by a loopback proxy in front of a real emulator to every
 * command that reads the registry. Each must exit 4 "unexpected answer from the registry", naming the request
 * and what was wrong, with no stack trace and no bug report, and write nothing after the bad read.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import type { CliResult } from '../helpers/result.js';
import { REPO_ROOT } from '../helpers/paths.js';
import {
  clients,
  createProvider,
  emulatorPerTest,
  gpgKeyPaths,
  keyIdOf,
  providerPaths,
  publishFixture,
  addGpgKey,
} from '../helpers/emulator/index.js';
import { isObject } from '../helpers/json.js';
import { jsonAnswer, startShapeProxy, type ReplacedAnswer, type ShapeProxy } from '../helpers/shape-proxy.js';
import { eventually, publishAll } from '../commands/helpers.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST, RELEASE, SIGNER_KEY, expectNoSecrets, writeRequests } from '../commands/publish/helpers.js';

const start = emulatorPerTest();
const proxies: ShapeProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/** What the registry holds before the command runs. */
type Setup = 'nothing' | 'provider' | 'version' | 'published';

async function prepare(emulator: Emulator, setup: Setup): Promise<void> {
  const { owner } = clients(emulator);
  const org = emulator.organization;
  if (setup === 'provider') {
    await createProvider(owner, org, 'example');
    await addGpgKey(owner, org, 'signer');
  } else if (setup === 'version') {
    await publishFixture(emulator, { platforms: [] });
  } else if (setup === 'published') {
    await publishAll(emulator);
  }
  emulator.requestLog.clear();
}

/** The paths of the requests the cases answer differently. */
function routes(org: string) {
  const p = providerPaths(org, 'example');
  return {
    provider: p.provider,
    versions: p.versions,
    version: p.version('1.2.3'),
    platforms: p.platforms('1.2.3'),
    platform: p.platform('1.2.3', 'linux', 'amd64'),
    keys: gpgKeyPaths().keys,
    key: gpgKeyPaths().key(org, keyIdOf('signer')),
  };
}

/** A pattern matching exactly one path. */
function exactly(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
}
type Route = keyof ReturnType<typeof routes>;

/** Marks a member to remove in `changed`. */
const REMOVED = Symbol('removed');

/** A copy of a JSON document with the value at a dotted path (`data.0.attributes`) replaced or removed. */
function changed(real: unknown, path: string, value: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(real)) as unknown;
  const steps = path.split('.');
  const last = steps.pop()!;
  let parent = copy as Record<string, unknown>;
  for (const step of steps) parent = parent[step] as Record<string, unknown>;
  if (value === REMOVED) delete parent[last];
  else parent[last] = value;
  return copy;
}

const HTML: ReplacedAnswer = {
  contentType: 'text/html; charset=utf-8',
  body: '<!DOCTYPE html><html><body><h1>Sign in to continue</h1></body></html>',
};

interface ShapeCase {
  name: string;
  setup: Setup;
  /** The command's words; the hostname, organization, name and token are added. */
  argv: string[];
  method: string;
  route: Route;
  answer: (real: unknown) => ReplacedAnswer;
  /** What the message must say was wrong. */
  problem: string;
  /** The writes the emulator may have received (default: none at all). */
  writes?: (org: string) => string[];
}

const PUBLISH = ['publish', RELEASE, '--key', SIGNER_KEY];

const CASES: ShapeCase[] = [
  {
    name: 'publish: the version read answers {"data":null}',
    setup: 'provider',
    argv: PUBLISH,
    method: 'GET',
    route: 'version',
    answer: () => jsonAnswer({ data: null }),
    problem: 'data: expected an object, got null',
  },
  {
    name: 'publish: the provider read answers attributes: null',
    setup: 'nothing',
    argv: PUBLISH,
    method: 'GET',
    route: 'provider',
    answer: () => jsonAnswer({ data: { id: 'prov-1', type: 'registry-providers', attributes: null } }),
    problem: 'data.attributes: expected an object, got null',
  },
  {
    name: 'publish: the key read answers HTML with a 200',
    setup: 'provider',
    argv: PUBLISH,
    method: 'GET',
    route: 'key',
    answer: () => HTML,
    problem: 'a body that is not JSON (text/html',
  },
  {
    name: 'publish: the platform list is an array where an object is expected',
    setup: 'version',
    argv: PUBLISH,
    method: 'GET',
    route: 'platforms',
    answer: () => jsonAnswer([]),
    problem: 'the document: expected an object, got an array',
  },
  {
    name: 'publish: the version says shasums-uploaded "yes"',
    setup: 'version',
    argv: PUBLISH,
    method: 'GET',
    route: 'version',
    answer: (real) => jsonAnswer(changed(real, 'data.attributes.shasums-uploaded', 'yes')),
    problem: 'data.attributes.shasums-uploaded: expected a boolean, got a string',
  },
  {
    name: 'publish: the created version carries no upload links',
    setup: 'provider',
    argv: PUBLISH,
    method: 'POST',
    route: 'versions',
    answer: (real) => jsonAnswer(changed(real, 'data.links', {}), 201),
    problem: 'data.links.shasums-upload: expected a string, got nothing',
    writes: (org) => [`POST ${providerPaths(org, 'example').versions}`],
  },
  {
    name: 'publish: the created platform has no links at all',
    setup: 'version',
    argv: [...PUBLISH, '--concurrency', '1'],
    method: 'POST',
    route: 'platforms',
    answer: (real) => jsonAnswer(changed(real, 'data.links', REMOVED), 201),
    problem: 'data.links: expected an object, got nothing',
    // The first create's answer stops the run: one platform created, nothing uploaded.
    writes: (org) => [`POST ${providerPaths(org, 'example').platforms('1.2.3')}`],
  },
  {
    name: 'versions list: a version number is null',
    setup: 'published',
    argv: ['versions', 'list'],
    method: 'GET',
    route: 'versions',
    answer: (real) => jsonAnswer(changed(real, 'data.0.attributes.version', null)),
    problem: 'data[0].attributes.version: expected a string, got null',
  },
  {
    name: 'versions list: a list without its pagination',
    setup: 'published',
    argv: ['versions', 'list'],
    method: 'GET',
    route: 'versions',
    answer: (real) => jsonAnswer(changed(real, 'meta', REMOVED)),
    problem: 'meta: expected an object, got nothing',
  },
  {
    name: 'versions show: data is an array',
    setup: 'published',
    argv: ['versions', 'show', '1.2.3'],
    method: 'GET',
    route: 'version',
    answer: () => jsonAnswer({ data: [] }),
    problem: 'data: expected an object, got an array',
  },
  {
    name: 'platforms list: data is an object',
    setup: 'published',
    argv: ['platforms', 'list', '1.2.3'],
    method: 'GET',
    route: 'platforms',
    answer: (real) => jsonAnswer(changed(real, 'data', {})),
    problem: 'data: expected an array, got an object',
  },
  {
    name: 'platforms show: attributes: null',
    setup: 'published',
    argv: ['platforms', 'show', '1.2.3', 'linux_amd64'],
    method: 'GET',
    route: 'platform',
    answer: (real) => jsonAnswer(changed(real, 'data.attributes', null)),
    problem: 'data.attributes: expected an object, got null',
  },
  {
    name: 'gpg-keys list: HTML with a 200',
    setup: 'published',
    argv: ['gpg-keys', 'list'],
    method: 'GET',
    route: 'keys',
    answer: () => HTML,
    problem: 'a body that is not JSON (text/html',
  },
  {
    name: 'gpg-keys add: the registration answers an empty 200',
    setup: 'nothing',
    argv: ['gpg-keys', 'add', path.join(REPO_ROOT, 'fixtures', 'keys', 'other.pub.asc')],
    method: 'POST',
    route: 'keys',
    answer: () => ({ body: '' }),
    problem: 'an empty body',
    writes: () => [`POST ${gpgKeyPaths().keys}`],
  },
  {
    name: 'gpg-keys add: the registration answers {"data":null}',
    setup: 'nothing',
    argv: ['gpg-keys', 'add', path.join(REPO_ROOT, 'fixtures', 'keys', 'other.pub.asc')],
    method: 'POST',
    route: 'keys',
    answer: () => jsonAnswer({ data: null }, 201),
    problem: 'data: expected an object, got null',
    writes: () => [`POST ${gpgKeyPaths().keys}`],
  },
  {
    name: 'check: the protocols are a string',
    setup: 'published',
    argv: ['check', '1.2.3'],
    method: 'GET',
    route: 'version',
    answer: (real) => jsonAnswer(changed(real, 'data.attributes.protocols', '6.0')),
    problem: 'data.attributes.protocols: expected an array, got a string',
  },
  {
    name: 'check: a registered key without attributes',
    setup: 'published',
    argv: ['check', '1.2.3'],
    method: 'GET',
    route: 'keys',
    answer: (real) => jsonAnswer(changed(real, 'data.0.attributes', REMOVED)),
    problem: 'data[0].attributes: expected an object, got nothing',
  },
  {
    name: 'delete: the version read answers {"data":null}',
    setup: 'published',
    argv: ['delete', '1.2.3', '--yes'],
    method: 'GET',
    route: 'version',
    answer: () => jsonAnswer({ data: null }),
    problem: 'data: expected an object, got null',
  },
  {
    name: 'delete --platform: a platform without os',
    setup: 'published',
    argv: ['delete', '1.2.3', '--platform', 'linux_amd64', '--yes'],
    method: 'GET',
    route: 'platforms',
    answer: (real) => jsonAnswer(changed(real, 'data.2.attributes.os', REMOVED)),
    problem: 'data[2].attributes.os: expected a string, got nothing',
  },
  {
    name: 'verify: a registered key whose armor is a number',
    setup: 'published',
    argv: ['verify', RELEASE],
    method: 'GET',
    route: 'keys',
    answer: (real) => jsonAnswer(changed(real, 'data.0.attributes.ascii-armor', 42)),
    problem: 'data[0].attributes.ascii-armor: expected a string, got a number',
  },
];

/** Runs a command through the proxy, as a user pointed at it would. */
function viaProxy(proxy: ShapeProxy, emulator: Emulator, argv: string[], json = false): Promise<CliResult> {
  return runCli(
    [
      ...argv,
      '--hostname',
      proxy.url,
      '--organization',
      emulator.organization,
      ...(argv[0] === 'publish' || argv[0] === 'verify' || argv[0] === 'gpg-keys'
        ? []
        : ['--name', 'example']),
      ...(json ? ['--json'] : []),
    ],
    { env: { TFE_TOKEN: emulator.ownerToken, ...FAST }, cwd: tempRoot() },
  );
}

/** The checks every case shares: exit 4, the request and the problem named, no bug report, no trace. */
function expectUnexpectedAnswer(
  result: CliResult,
  emulator: Emulator,
  request: string,
  problem: string,
): void {
  const shown = `exit ${result.exitCode}\n${result.stderr}`;
  expect(result.exitCode, shown).toBe(4);
  expect(result.stderr, shown).toContain('unexpected answer from the registry');
  expect(result.stderr, shown).toContain(request);
  expect(result.stderr, shown).toContain(problem);
  expect(result.stderr, shown).not.toMatch(/bug/i);
  expect(result.stderr, shown).not.toMatch(/TypeError|SyntaxError|ZodError/);
  expect(result.stderr, shown).not.toMatch(/^\s+at /m);
  expectNoSecrets(result.stdout + result.stderr, emulator, 'the output');
}

describe('answers of the wrong shape', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: exit 4, nothing written after it', async (_, c) => {
    const emulator = await start();
    await prepare(emulator, c.setup);
    const route = routes(emulator.organization)[c.route];
    const proxy = await startShapeProxy(emulator.url, [
      { method: c.method, path: exactly(route), answer: c.answer },
    ]);
    proxies.push(proxy);
    const result = await viaProxy(proxy, emulator, c.argv);
    expect(proxy.hits, 'the proxy replaced the answer').toEqual([1]);
    expectUnexpectedAnswer(result, emulator, `${c.method} ${route}`, c.problem);
    await eventually(() => expect(writeRequests(emulator)).toEqual(c.writes?.(emulator.organization) ?? []));
  });

  it('--json: one error document with code api, the request and the problems', async () => {
    const emulator = await start();
    await prepare(emulator, 'published');
    const proxy = await startShapeProxy(emulator.url, [
      {
        method: 'GET',
        path: exactly(routes(emulator.organization).version),
        answer: (real) =>
          jsonAnswer(changed(changed(real, 'data.attributes.version', 123), 'data.attributes.key-id', null)),
      },
    ]);
    proxies.push(proxy);
    const result = await viaProxy(proxy, emulator, ['versions', 'show', '1.2.3'], true);
    expect(result.exitCode, result.stderr).toBe(4);
    const doc = JSON.parse(result.stdout) as { ok: boolean; error: Record<string, unknown> };
    expect(doc.ok).toBe(false);
    expect(doc.error.code).toBe('api');
    expect(doc.error.message).toMatch(/^unexpected answer from the registry: GET \/api\/v2\//);
    expect(isObject(doc.error.details) && doc.error.details).toMatchObject({
      method: 'GET',
      path: providerPaths(emulator.organization, 'example').version('1.2.3'),
      status: 200,
      problems: [
        'data.attributes.version: expected a string, got a number',
        'data.attributes.key-id: expected a string, got null',
      ],
    });
  });

  it('names at most a few problems of a document that is wrong everywhere', async () => {
    const emulator = await start();
    await prepare(emulator, 'published');
    const proxy = await startShapeProxy(emulator.url, [
      {
        method: 'GET',
        path: exactly(routes(emulator.organization).platforms),
        answer: (real) =>
          jsonAnswer(
            changed(
              real,
              'data',
              Array.from({ length: 5 }, () => ({ id: 1, attributes: [] })),
            ),
          ),
      },
    ]);
    proxies.push(proxy);
    const result = await viaProxy(proxy, emulator, ['platforms', 'list', '1.2.3']);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toContain('data[0].id: expected a string, got a number');
    expect(result.stderr).toMatch(/and \d+ more problems/);
    expect(result.stderr.length).toBeLessThan(2_000);
  });

  it('the built bin/provider.cjs publish: exit 4 with the message and no stack trace', async () => {
    const emulator = await start();
    await prepare(emulator, 'provider');
    const proxy = await startShapeProxy(emulator.url, [
      {
        method: 'GET',
        path: exactly(routes(emulator.organization).version),
        answer: () => jsonAnswer({ data: null }),
      },
    ]);
    proxies.push(proxy);
    const child = spawn(
      process.execPath,
      [
        path.join(REPO_ROOT, 'bin', 'provider.cjs'),
        ...PUBLISH,
        '--hostname',
        proxy.url,
        '--organization',
        emulator.organization,
      ],
      {
        cwd: tempRoot(),
        env: { PATH: process.env.PATH ?? '', HOME: tempRoot(), TFE_TOKEN: emulator.ownerToken, ...FAST },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const request = `GET ${providerPaths(emulator.organization, 'example').version('1.2.3')}`;
    expectUnexpectedAnswer(
      { exitCode, stdout, stderr },
      emulator,
      request,
      'data: expected an object, got null',
    );
    await eventually(() => expect(writeRequests(emulator)).toEqual([]));
  });
});
