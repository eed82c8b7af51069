/** Temp-folder helpers for the config tests; every folder is a fresh one under the OS temp folder. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'vitest';
import { UsageError } from '../../src/errors.js';

const created: string[] = [];

/** A new empty folder; marked as a project root (go.mod) unless told not to, so searches stay inside it. */
export function tempDir(options: { projectRoot?: boolean } = {}): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'provider-config-')));
  created.push(dir);
  if (options.projectRoot !== false) fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/p\n');
  return dir;
}

/** Removes every folder `tempDir` made; call it from `afterAll`. */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Writes files (relative path → text; objects become JSON) under `dir`, creating folders as needed. */
export function writeFiles(dir: string, files: Record<string, string | object>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
}

/** Runs `action` and returns the UsageError it throws (failing the test if it throws anything else). */
export function usageErrorOf(action: () => unknown): UsageError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('expected a UsageError, but nothing was thrown');
}

/** The async version of `usageErrorOf`. */
export async function asyncUsageErrorOf(action: () => Promise<unknown>): Promise<UsageError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('expected a UsageError, but nothing was thrown');
}
