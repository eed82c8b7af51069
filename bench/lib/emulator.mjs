// `provider emulate` in its own process, exactly as a user starts it, optionally with a shaped network.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN } from './env.mjs';
import { startServer } from './proc.mjs';

/** Starts an emulator whose state lives under `dir`; resolves with its start-up document and `stop()`. */
export async function startEmulator({ dir, latency, bandwidth } = {}) {
  const dataDir = fs.mkdtempSync(path.join(dir, 'emulator-'));
  const args = [BIN, 'emulate', '--json', '--port', '0', '--data-dir', dataDir];
  if (latency) args.push('--latency', latency);
  if (bandwidth) args.push('--bandwidth', bandwidth);
  const server = await startServer(process.execPath, args, { stderr: 'pipe' });
  return {
    ...server.doc,
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
