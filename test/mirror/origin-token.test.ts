/**
 * The origin's own token (TF_TOKEN_<host>) goes to the origin and nowhere else: not to the same host over plain
 * http when the https origin redirects there (got keeps the header on a redirect to the same host and port,
 * whatever the scheme), nor to another host. The origin is https on loopback with the test certificate, trusted
 * in this process only.
 */
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';
import { buildRelease, LOOPBACK_CERT, startOrigin, type TestOrigin } from './origin.js';

const TOKEN = 'origin-token-never-in-cleartext';
// Offline, loopback only: the test certificate is the one trusted while this file runs.
const trusted = tls.getCACertificates('default');
beforeAll(() => tls.setDefaultCACertificates([LOOPBACK_CERT]));
afterAll(() => tls.setDefaultCACertificates(trusted));

async function mirror(o: TestOrigin) {
  const cwd = tempRoot();
  return runCli(
    ['mirror', 'acme/example', '--from', o.url, '--to-dir', 'out', '--platforms', 'linux_amd64'],
    {
      cwd,
      homeDir: cwd,
      env: { NO_COLOR: '1', TF_TOKEN_127_0_0_1: TOKEN, PROVIDER_RETRY_DELAY: '2ms' },
    },
  );
}

describe("provider mirror: the origin's token", () => {
  it('is not sent over plain http when the https origin redirects to http on the same host and port', async () => {
    const o = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])], {}, { tls: true });
    o.faults.redirectVersions = o.url.replace(/^https:/, 'http:');
    const result = await mirror(o);
    expect(result.exitCode, result.stderr).toBe(0);
    // The token was in play: the origin itself got it over TLS.
    expect(o.seen).toContainEqual({ scheme: 'https', path: '/.well-known/terraform.json', authorized: true });
    const cleartext = o.seen.filter((r) => r.scheme === 'http');
    expect(cleartext.map((r) => r.path)).toEqual(['/registry/v1/providers/acme/example/versions']);
    expect(cleartext.filter((r) => r.authorized)).toEqual([]);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });

  it('is not sent to another host the origin redirects to', async () => {
    const other = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const o = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])], {}, { tls: true });
    o.faults.redirectVersions = other.url;
    const result = await mirror(o);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(o.seen.filter((r) => r.authorized).length).toBeGreaterThan(0);
    expect(other.seen.map((r) => [r.path, r.authorized])).toEqual([
      ['/registry/v1/providers/acme/example/versions', false],
    ]);
  });
});
