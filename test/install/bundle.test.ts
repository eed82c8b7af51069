/**
 * The transforms scripts/bundle.mjs applies to dependencies, each checked on its own: what it changes, and that
 * the dependency still behaves as before.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { lazyListFormat } from '../../scripts/bundle.mjs';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';

/** A check of @sindresorhus/is that fails with a message built by both of its list formatters. */
const FAILING_CHECK = [
  "import is, { assert } from '@sindresorhus/is';",
  "const made = Intl.ListFormat.made ?? 'not counted';",
  'try {',
  '  assert.any([is.string, is.number], true, null);',
  '} catch (error) {',
  '  console.log(JSON.stringify({ made, message: error.message }));',
  '}',
].join('\n');

/** Counts the `Intl.ListFormat`s made, in `Intl.ListFormat.made`, before anything else loads. */
const COUNTING = [
  'const real = Intl.ListFormat;',
  'let made = 0;',
  'Intl.ListFormat = new Proxy(real, { construct: (t, a, n) => (made++, Reflect.construct(t, a, n)) });',
  "Object.defineProperty(Intl.ListFormat, 'made', { get: () => made });",
].join('\n');

describe('lazyListFormat: @sindresorhus/is makes its Intl.ListFormats on first use', () => {
  it('none when it loads, and the same messages as the package itself', async () => {
    const dir = tempDir('lazy-list-format');
    const counting = path.join(dir, 'counting.cjs');
    fs.writeFileSync(counting, COUNTING);
    type Outcome = { made: number | string; message: string };
    const run = (args: string[]): Outcome =>
      JSON.parse(
        execFileSync(process.execPath, ['--require', counting, ...args], {
          cwd: REPO_ROOT,
          encoding: 'utf8',
        }),
      ) as Outcome;
    // The package as it is (resolved from the repository's node_modules): two formatters made as it loads.
    const asIs = run(['--input-type=module', '-e', FAILING_CHECK]);
    expect(asIs.made).toBe(2);
    const built = path.join(dir, 'bundled.mjs');
    await esbuild.build({
      stdin: { contents: FAILING_CHECK, resolveDir: REPO_ROOT, loader: 'js' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: built,
      logLevel: 'silent',
      plugins: [lazyListFormat()],
    });
    expect(fs.readFileSync(built, 'utf8')).not.toMatch(/^(var|let|const) \w+ = new Intl\.ListFormat/m);
    const bundled = run([built]);
    expect(bundled.made).toBe(0);
    expect(bundled.message).toBe(asIs.message);
    expect(bundled.message).toBe(
      'Expected values which are `string` or `number`. Received values of types `boolean` and `null`.',
    );
  });
});
