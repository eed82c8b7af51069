/**
 * `--hostname 127.0.0.1:8080` (a bare host means https) against a plain-HTTP server: the TLS handshake meets an
 * HTTP answer (EPROTO, "wrong version number"). The message says the server did not answer TLS and the hint how
 * a plain-HTTP server is given (http://host:port), instead of "check the network"; nothing is retried or written.
 * The emulator is that server, on loopback: the built CLI against it (CI mode and a pseudo-terminal), and the
 * upload and download transports against https:// links to it.
 */
import * as net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { createDownloader, DownloadError } from '../../src/registry/downloads.js';
import { uploadFile } from '../../src/registry/uploads.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { ensureBuilt, spawnCli, spawnOnTerminal } from '../helpers/spawn-cli.js';
import { publishAll } from '../commands/helpers.js';
import { RELEASE, SIGNER_KEY, expectNoSecrets } from '../commands/publish/helpers.js';
import { tempRoot } from '../helpers/tmp.js';

const emulator = emulatorPerTest();

beforeAll(ensureBuilt, 120_000);

describe('the built CLI given a plain-HTTP server as host:port', () => {
  it('versions list says the server did not answer TLS and how to give a plain-HTTP server', async () => {
    const e = await emulator();
    const hostPort = new URL(e.url).host;
    const args = ['versions', 'list', '--hostname', hostPort, '--organization', e.organization];
    const result = await spawnCli([...args, '--name', 'example'], tempRoot(), { TFE_TOKEN: e.ownerToken });
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toContain(`on https://${hostPort} failed: the server did not answer TLS (EPROTO)`);
    expect(result.stderr).toContain(`give it as http://${hostPort}`);
    expect(result.stderr).not.toMatch(/check the network/i);
    expect(e.requestLog.records).toEqual([]);
    expectNoSecrets(result.stdout + result.stderr, e, 'the output');
  });

  it('publish says the same on a terminal, ends, and writes nothing', async () => {
    const e = await emulator();
    const hostPort = new URL(e.url).host;
    const args = ['publish', RELEASE, '--key', SIGNER_KEY, '--hostname', hostPort];
    const result = await spawnOnTerminal([...args, '--organization', e.organization], tempRoot(), {
      TFE_TOKEN: e.ownerToken,
    });
    expect(result.exitCode, result.stdout.slice(-2000)).toBe(4);
    expect(result.stdout).toContain('the server did not answer TLS (EPROTO)');
    expect(result.stdout).toContain(`give it as http://${hostPort}`);
    expect(e.store.data.providers).toEqual([]);
    expectNoSecrets(result.stdout, e, 'the output');
  });

  it('--json carries the reason in the error document', async () => {
    const e = await emulator();
    const hostPort = new URL(e.url).host;
    const args = ['platforms', 'list', '1.2.3', '--hostname', hostPort, '--organization', e.organization];
    const result = await spawnCli([...args, '--name', 'example', '--json'], tempRoot(), {
      TFE_TOKEN: e.ownerToken,
    });
    expect(result.exitCode).toBe(4);
    const doc = JSON.parse(result.stdout) as { error: { message: string; hint: string; details: unknown } };
    expect(doc.error.message).toContain('the server did not answer TLS (EPROTO)');
    expect(doc.error.hint).toContain(`http://${hostPort}`);
    expect(doc.error.details).toMatchObject({ reason: 'the server did not answer TLS (EPROTO)' });
  });

  it('the same server given as http://host:port answers', async () => {
    const e = await emulator();
    await publishAll(e);
    const args = ['versions', 'list', '--hostname', e.url, '--organization', e.organization];
    const result = await spawnCli([...args, '--name', 'example'], tempRoot(), { TFE_TOKEN: e.ownerToken });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('1.2.3');
  });
});

/** A loopback TCP relay to the emulator that counts connections (one per attempt). */
const relays: net.Server[] = [];
afterEach(() => relays.splice(0).forEach((r) => r.close()));
async function countingRelay(target: string): Promise<{ host: string; connections: () => number }> {
  const { hostname, port } = new URL(target);
  let connections = 0;
  const relay = net.createServer((socket) => {
    connections++;
    const upstream = net.connect(Number(port), hostname);
    socket.pipe(upstream).pipe(socket);
    const close = (): void => void (socket.destroy(), upstream.destroy());
    socket.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  relays.push(relay);
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port: relayPort } = relay.address() as net.AddressInfo;
  return { host: `127.0.0.1:${relayPort}`, connections: () => connections };
}

describe('links the registry hands out, pointing at a plain-HTTP server with https://', () => {
  const output = (): Output => new Output({ stdout: new Capture(), stderr: new Capture(), env: {} });

  it('an upload fails at once, named as a TLS problem of the link, not the network', async () => {
    const e = await emulator();
    const relay = await countingRelay(e.url);
    const url = `https://${relay.host}/_archivist/v1/object/secret-part`;
    const retries: string[] = [];
    const error = await uploadFile({
      url,
      filename: 'terraform-provider-example_1.2.3_SHA256SUMS',
      output: output(),
      body: { data: new Uint8Array([1, 2, 3]) },
      retry: { limit: 3, baseDelayMs: 1, maxDelayMs: 1 },
      onRetry: (_n, reason) => retries.push(reason),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.message).toBe(
      'Uploading terraform-provider-example_1.2.3_SHA256SUMS failed: the server did not answer TLS (EPROTO)',
    );
    expect(apiError.hint).toContain('answered in plain HTTP, not TLS');
    expect(apiError.hint).not.toContain('secret-part');
    expect(retries).toEqual([]);
    expect(relay.connections()).toBe(1);
  });

  it('a download fails at once with the same reason and is not retried', async () => {
    const e = await emulator();
    const relay = await countingRelay(e.url);
    const url = `https://${relay.host}/_archivist/v1/object/secret-part`;
    const error = await createDownloader({ output: output(), baseDelayMs: 0 })
      .bytes(url, 'SHA256SUMS')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).reason).toBe('the server did not answer TLS (EPROTO)');
    expect((error as DownloadError).network?.kind).toBe('plain-http');
    expect(relay.connections()).toBe(1);
  });
});
