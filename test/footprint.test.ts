/**
 * V8 set for a small footprint (src/footprint.ts), and the commands that ask for it. V8's flags are the process's,
 * so they are looked at in a child process of its own (the compiled modules of dist/), never in the tests'.
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

/** What a child process saw of its V8: the young generation's size before and after, and Turbofan's work. */
interface Seen {
  before: number;
  after: number;
  turbofanned: boolean;
}

/**
 * A child that hashes two files with a worker thread (whose heap, on V8 11 and 12, sets the growth factor back),
 * allocates objects of which many survive each collection, as a publish does, and asks V8 to optimize a function
 * (V8's own test functions, `%OptimizeFunctionOnNextCall`): what it saw, with `small` after
 * `preferSmallFootprint()`.
 */
function child(small: boolean): Seen {
  ensureBuilt();
  const dir = tempRoot('footprint');
  const files = ['a.bin', 'b.bin'].map((name) => path.join(dir, name));
  for (const file of files) fs.writeFileSync(file, Buffer.alloc(64 * 1024, 1));
  const url = (file: string): string => pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href;
  const source = [
    "import v8 from 'node:v8';",
    `const { preferSmallFootprint } = await import(${JSON.stringify(url('footprint.js'))});`,
    `const { hashFiles } = await import(${JSON.stringify(url('release/hashing.js'))});`,
    "const size = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;",
    'const before = size();',
    `if (${String(small)}) preferSmallFootprint();`,
    `await hashFiles(${JSON.stringify(files)}, { inlineBelowBytes: 0, parallelism: 2 });`,
    'const survivors = [];',
    'for (let i = 0; i < 2e6; i++) {',
    '  survivors.push({ i });',
    '  if (survivors.length > 50000) survivors.splice(0, 25000);',
    '}',
    "v8.setFlagsFromString('--allow-natives-syntax');",
    '// V8\'s optimization status bits: 1 << 6 is "Turbofan code" on V8 11 to 13.',
    'const status = new Function(`',
    '  const add = (a, b) => a + b;',
    '  %PrepareFunctionForOptimization(add);',
    '  add(1, 2);',
    '  %OptimizeFunctionOnNextCall(add);',
    '  add(3, 4);',
    '  return %GetOptimizationStatus(add);',
    '`)();',
    'console.log(JSON.stringify({ before, after: size(), turbofanned: (status & (1 << 6)) !== 0 }));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  return JSON.parse(out) as Seen;
}

describe('preferSmallFootprint', () => {
  it('by default, V8 grows the young generation of such a process and optimizes with Turbofan', () => {
    const seen = child(false);
    expect(seen.after).toBeGreaterThanOrEqual(4 * seen.before);
    expect(seen.turbofanned).toBe(true);
  });

  it('keeps the young generation at its size from then on, a worker thread started afterwards notwithstanding, and Turbofan off', () => {
    const seen = child(true);
    // One doubling may slip in on V8 11 and 12: a collection while the worker's heap is being made, which sets
    // the growth factor back until the worker is online.
    expect(seen.after).toBeLessThanOrEqual(2 * seen.before);
    expect(seen.turbofanned).toBe(false);
  });
});

describe('the commands that ask for it', () => {
  /** Runs the program in-process with a `preferSmallFootprint` of its own; how often it was called. */
  async function calls(argv: string[]): Promise<number> {
    const keep = vi.fn(() => Promise.resolve());
    await run({
      argv,
      env: {},
      cwd: tempRoot('footprint-commands'),
      homeDir: tempRoot('footprint-home'),
      stdout: new Capture(),
      stderr: new Capture(),
      stdinIsTTY: false,
      signal: new AbortController().signal,
      preferSmallFootprint: keep,
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
