/**
 * V8's young generation kept small (src/heap.ts), and the commands that ask for it. The flag is the process's,
 * so the heap is looked at in a child process of its own (the compiled modules of dist/), never in the tests'.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { run } from '../src/cli/main.js';
import { Capture } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/paths.js';
import { ensureBuilt } from './helpers/spawn-cli.js';
import { tempRoot } from './helpers/tmp.js';

/**
 * A child that hashes two files with a worker thread (whose heap, on V8 11 and 12, sets the growth factor back),
 * then allocates objects of which many survive each collection, as a publish does: its young generation's size
 * before and after, with `keep` after `keepYoungGenerationSmall()`.
 */
function youngGeneration(keep: boolean): { before: number; after: number } {
  ensureBuilt();
  const dir = tempRoot('heap');
  const files = ['a.bin', 'b.bin'].map((name) => path.join(dir, name));
  for (const file of files) fs.writeFileSync(file, Buffer.alloc(64 * 1024, 1));
  const url = (file: string): string => pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href;
  const child = [
    "import v8 from 'node:v8';",
    `const { keepYoungGenerationSmall } = await import(${JSON.stringify(url('heap.js'))});`,
    `const { hashFiles } = await import(${JSON.stringify(url('release/hashing.js'))});`,
    "const size = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;",
    'const before = size();',
    `if (${String(keep)}) keepYoungGenerationSmall();`,
    `await hashFiles(${JSON.stringify(files)}, { inlineBelowBytes: 0, parallelism: 2 });`,
    'const survivors = [];',
    'for (let i = 0; i < 2e6; i++) {',
    '  survivors.push({ i });',
    '  if (survivors.length > 50000) survivors.splice(0, 25000);',
    '}',
    'console.log(JSON.stringify({ before, after: size() }));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' });
  return JSON.parse(out) as { before: number; after: number };
}

describe('keepYoungGenerationSmall', () => {
  it('V8 grows the young generation of such a process by default', () => {
    const { before, after } = youngGeneration(false);
    expect(after).toBeGreaterThan(before);
  });

  it('keeps it at its size from then on, a worker thread started afterwards notwithstanding', () => {
    const { before, after } = youngGeneration(true);
    expect(after).toBe(before);
  });
});

describe('the commands that keep it small', () => {
  /** Runs the program in-process with a `keepYoungGenerationSmall` of its own; how often it was called. */
  async function calls(argv: string[]): Promise<number> {
    const keep = vi.fn(() => Promise.resolve());
    await run({
      argv,
      env: {},
      cwd: tempRoot('heap-commands'),
      homeDir: tempRoot('heap-home'),
      stdout: new Capture(),
      stderr: new Capture(),
      stdinIsTTY: false,
      signal: new AbortController().signal,
      keepYoungGenerationSmall: keep,
    });
    return keep.mock.calls.length;
  }

  it('publish and verify ask for it when they run (here, to fail at once: no release folder)', async () => {
    expect(await calls(['publish'])).toBe(1);
    expect(await calls(['verify'])).toBe(1);
  });

  it('other commands, and help, do not', async () => {
    expect(await calls(['versions', 'list'])).toBe(0);
    expect(await calls(['check', '1.2.3'])).toBe(0);
    expect(await calls(['publish', '--help'])).toBe(0);
  });
});
