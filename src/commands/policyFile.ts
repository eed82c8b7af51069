/**
 * Which policy file a command reads: `--policy` (from the working directory), else the configuration file's
 * `policy` key (from the configuration file's folder), else none. The path as shown in messages is the flag as
 * given, or the configuration's path relative to the working directory.
 */
import * as path from 'node:path';
import type { Settings } from '../config/resolve.js';

/** The policy file to read, absolute and as shown; undefined when neither names one. */
export function policyFileOf(
  flag: string | undefined,
  settings: Pick<Settings, 'policyFile'>,
  cwd: string,
): { file: string; shown: string } | undefined {
  if (flag !== undefined) return { file: path.resolve(cwd, flag), shown: flag };
  if (settings.policyFile === undefined) return undefined;
  return { file: settings.policyFile, shown: path.relative(cwd, settings.policyFile) || settings.policyFile };
}
