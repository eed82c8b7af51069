/** Helpers for the config tests: writing files into a temp folder, and catching the UsageError an action throws. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { UsageError } from '../../src/errors.js';

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
