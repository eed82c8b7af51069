/** The part of the process a registry command's core needs, taken from the CLI's io. */
import type { SessionWorld } from '../registry/session.js';
import type { CliIo } from './context.js';

/** env, cwd, home folder and the interrupt signal. */
export function worldOf(io: CliIo): SessionWorld {
  return { env: io.env, cwd: io.cwd, homeDir: io.homeDir, signal: io.signal };
}
