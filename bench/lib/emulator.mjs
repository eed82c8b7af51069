// `provider emulate` in its own process, exactly as a user starts it, optionally with a shaped network.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN } from './env.mjs';
import { startServer } from './proc.mjs';

/**
 * The start-up document of `provider emulate --json` (src/commands/emulate.ts).
 * @typedef {object} EmulatorDoc
 * @property {string} url
 * @property {string} organization
 * @property {string} ownerToken
 * @property {string} memberToken
 * @property {string} outsiderToken
 * @property {string} dataDir
 */

/** @typedef {EmulatorDoc & { stop(): Promise<void> }} Emulator a running emulator */

/**
 * The emulator's network shaping (`--latency`, `--bandwidth`, `--total-bandwidth`), as the user writes it.
 * @typedef {object} Network
 * @property {string} [latency] e.g. `40ms`
 * @property {string} [bandwidth] e.g. `25MB/s`, per connection
 * @property {string} [totalBandwidth] e.g. `100MB/s`, shared by every connection
 */

/**
 * Starts an emulator whose state lives under `dir`; resolves with its start-up document and `stop()`.
 * @param {{ dir: string, ranges?: boolean, requestLog?: string } & Network} options with `ranges`, downloads
 *   answer byte ranges; with `requestLog`, every request is logged to that file (one JSON line each)
 * @returns {Promise<Emulator>}
 */
export async function startEmulator({ dir, latency, bandwidth, totalBandwidth, ranges, requestLog }) {
  const dataDir = fs.mkdtempSync(path.join(dir, 'emulator-'));
  const args = [BIN, 'emulate', '--json', '--port', '0', '--data-dir', dataDir];
  if (ranges) args.push('--ranges');
  if (requestLog) args.push('--request-log', requestLog);
  if (latency) args.push('--latency', latency);
  if (bandwidth) args.push('--bandwidth', bandwidth);
  if (totalBandwidth) args.push('--total-bandwidth', totalBandwidth);
  /** @type {import('./proc.mjs').StartedServer<EmulatorDoc>} */
  const server = await startServer(process.execPath, args, { stderr: 'pipe' });
  return {
    ...server.doc,
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
