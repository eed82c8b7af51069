/**
 * A pseudo-terminal that reports 0 columns (one nobody sized: `script`, `docker run -t`, some CI runners): a
 * publish that fails while its spinner turns must end with its error, not erase lines above it without end.
 * The built CLI on `script`'s terminal, against a port where nothing listens (refused at once, every retry).
 */
import * as net from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { ensureBuilt, spawnOnTerminal } from '../helpers/spawn-cli.js';
import { RELEASE, SIGNER_KEY } from '../commands/publish/helpers.js';
import { tempRoot } from '../helpers/tmp.js';

beforeAll(ensureBuilt, 120_000);

/** A loopback port that was free a moment ago and has nothing listening now. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it('publish failing under its spinner ends with exit 4 and its error', async () => {
  const port = await closedPort();
  const args = ['publish', RELEASE, '--key', SIGNER_KEY, '--hostname', `http://127.0.0.1:${port}`];
  const result = await spawnOnTerminal([...args, '--organization', 'example-org'], tempRoot(), {
    TFE_TOKEN: 'not-a-real-token-1234',
  });
  expect(result.exitCode, result.stdout.slice(-500)).toBe(4);
  expect(result.stdout).toContain(`on http://127.0.0.1:${port} failed: ECONNREFUSED`);
  // What ora erased is the spinner's own line or two, not hundreds of rows.
  expect(result.stdout.split('\u001b[1A').length).toBeLessThan(20);
});
