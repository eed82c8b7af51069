/**
 * Run by tmp.test.ts in a vitest of its own (not part of the suite): makes a folder in each lifetime tempDir
 * knows, checks which exist when, and writes their paths to $TMP_REPORT from its last hook, so the parent can
 * check that the helper removed them after that hook.
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../tmp.js';

const made: Record<string, string> = { collection: tempDir('collection') };

beforeAll(() => {
  made.beforeAll = tempDir('before-all');
});

it('makes a folder for the test and one kept for the file', () => {
  made.test = tempDir('test');
  made.untilFile = tempDir('until-file', { until: 'file' });
});

it('finds the folders kept for the file, not the one of the previous test', () => {
  expect(fs.existsSync(made.test!)).toBe(false);
  for (const name of ['collection', 'beforeAll', 'untilFile'])
    expect(fs.existsSync(made[name]!), name).toBe(true);
});

afterAll(() => {
  for (const name of ['collection', 'beforeAll', 'untilFile'])
    expect(fs.existsSync(made[name]!), name).toBe(true);
  fs.writeFileSync(process.env.TMP_REPORT!, JSON.stringify(made));
});
