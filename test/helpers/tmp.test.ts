/**
 * The temp-folder helper (tmp.ts): a folder made in a test is there for the test and its afterEach hooks and
 * gone after; a concurrent test's, one made with `until: 'file'` and one made outside a test stay until the
 * file's own afterAll hooks have run (checked in a vitest run of its own); tempRoot marks a project root;
 * removeTempDirs frees folders early.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './paths.js';
import { removeTempDirs, tempDir, tempRoot } from './tmp.js';

describe('a folder made in a test', () => {
  let made: string | undefined;
  afterEach(() => {
    // The test's own afterEach hooks (which close what writes there) still find it.
    if (made !== undefined) expect(fs.existsSync(made)).toBe(true);
  });

  it('is a fresh empty folder under the temp folder, named after the test file, by its real path', () => {
    made = tempDir('label');
    expect(fs.readdirSync(made)).toEqual([]);
    expect(path.dirname(made)).toBe(fs.realpathSync(os.tmpdir()));
    expect(path.basename(made)).toMatch(/^provider-tmp-label-[A-Za-z0-9]{6}$/);
    expect(fs.realpathSync(made)).toBe(made);
    fs.mkdirSync(path.join(made, 'sub'));
    fs.writeFileSync(path.join(made, 'sub', 'file'), 'content');
  });

  it('is gone, with what the test wrote in it, once that test has finished', () => {
    expect(made).toBeDefined();
    expect(fs.existsSync(made!)).toBe(false);
    made = undefined;
  });
});

describe('under a parent', () => {
  it('is made in that folder', () => {
    const parent = tempDir();
    const child = tempDir('child', { parent });
    expect(path.dirname(child)).toBe(parent);
  });
});

describe("with until: 'file'", () => {
  let kept: string | undefined;
  it('is made in one test', () => {
    kept = tempDir('kept', { until: 'file' });
  });
  it('and still there in the next', () => {
    expect(fs.existsSync(kept!)).toBe(true);
  });
});

describe.concurrent('made in a concurrent test', () => {
  // vitest cannot tell which running test asked: the folder must not go when another concurrent test ends.
  const signal = (): { wait: Promise<void>; fire: () => void } => {
    let fire!: () => void;
    const wait = new Promise<void>((resolve) => (fire = resolve));
    return { wait, fire };
  };
  const otherStarted = signal();
  const made = signal();
  const otherEnded = signal();

  it('outlives another test that ends while it runs', async () => {
    await otherStarted.wait; // vitest's current test is now the other one
    const dir = tempDir('concurrent');
    made.fire();
    await otherEnded.wait;
    await new Promise((resolve) => setImmediate(resolve));
    expect(fs.existsSync(dir)).toBe(true);
  });

  it('(the other test, started second and ended first)', async ({ onTestFinished: finished }) => {
    finished(() => otherEnded.fire());
    otherStarted.fire();
    await made.wait;
  });
});

describe('tempRoot', () => {
  it('marks the folder as a project root', () => {
    const root = tempRoot('root');
    expect(fs.readdirSync(root)).toEqual(['go.mod']);
    expect(fs.readFileSync(path.join(root, 'go.mod'), 'utf8')).toMatch(/^module /);
  });
});

describe('removeTempDirs', () => {
  it('removes folders now, and the file-end cleanup does not trip over them', () => {
    const early = tempDir('early', { until: 'file' });
    const other = tempDir('early');
    removeTempDirs(early, other);
    expect([fs.existsSync(early), fs.existsSync(other)]).toEqual([false, false]);
  });
});

describe('folders kept for the file', () => {
  it('outlive every test and the file’s own afterAll hooks, and are gone when the file ends', async () => {
    const report = path.join(tempDir('report'), 'made.json');
    const fixture = path.join(REPO_ROOT, 'test', 'helpers', 'tmp-fixture');
    const child = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', fixture],
      {
        cwd: fixture,
        env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), TMPDIR: os.tmpdir(), TMP_REPORT: report },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, output).toBe(0);
    const made = JSON.parse(fs.readFileSync(report, 'utf8')) as Record<string, string>;
    expect(Object.keys(made).sort()).toEqual(['beforeAll', 'collection', 'test', 'untilFile']);
    for (const [name, dir] of Object.entries(made)) expect(fs.existsSync(dir), name).toBe(false);
  }, 60_000);
});
