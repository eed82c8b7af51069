/**
 * The one way a test makes a temporary folder. `tempDir(label)` makes a fresh, empty folder (its real path),
 * named after the test file and the label, under the OS temp folder or under `parent` (a tmpfs a test mounted),
 * and removes it once nothing needs it:
 *
 *   - made inside a test (or its beforeEach): when that test finishes, after its afterEach hooks (which close
 *     the emulators and servers writing there);
 *   - made outside a test (at collection, in beforeAll), inside a concurrent test (vitest cannot tell which of
 *     the running tests asked), or with `until: 'file'`: after the file's last test and its own afterAll hooks.
 *
 * `tempRoot(label)` is the same folder marked as a project root (a go.mod), so no configuration file above it
 * is found. `removeTempDirs(...)` removes folders before their time: a concurrent test that makes many of them
 * (one per seed) frees them as it goes instead of holding them all until the file ends.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TestRunner, afterAll, expect, onTestFinished } from 'vitest';

/** Options of `tempDir`. */
export interface TempDirOptions {
  /** The folder to make it in (default: the OS temp folder). */
  parent?: string;
  /** `'file'`: keep it until the test file ends even when made inside a test (a folder later tests reuse). */
  until?: 'test' | 'file';
}

const untilFileEnd: string[] = [];

// Registered when a test file first imports this module, before the file registers its own hooks: vitest runs
// after-hooks in reverse order, so this one runs last, once the file's servers are closed.
afterAll(() => {
  for (const dir of untilFileEnd.splice(0).reverse()) remove(dir);
});

/** A fresh empty folder `<parent>/provider-<test file>[-<label>]-XXXXXX` (real path), removed as the header says. */
export function tempDir(label?: string, options: TempDirOptions = {}): string {
  const file = path
    .basename(expect.getState().testPath ?? 'test')
    .replace(/(\.test|\.fixture)?\.[cm]?[jt]s$/, '');
  const name = ['provider', file, label].filter((part) => part !== undefined).join('-');
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(options.parent ?? os.tmpdir(), `${name}-`)));
  const test = TestRunner.getCurrentTest();
  if (options.until !== 'file' && test !== undefined && test.concurrent !== true) {
    onTestFinished(() => remove(dir));
  } else {
    untilFileEnd.push(dir);
  }
  return dir;
}

/** A fresh folder marked as a project root (a go.mod), so no configuration file above it is found. */
export function tempRoot(label?: string, options: TempDirOptions = {}): string {
  const dir = tempDir(label, options);
  fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/test\n');
  return dir;
}

/** Removes folders `tempDir` made now, rather than when their test or file ends. */
export function removeTempDirs(...dirs: string[]): void {
  for (const dir of dirs) {
    remove(dir);
    const index = untilFileEnd.indexOf(dir);
    if (index >= 0) untilFileEnd.splice(index, 1);
  }
}

/** Removes a folder and everything in it; one already gone (a test removed it itself) is fine. */
function remove(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
