/**
 * The transforms scripts/bundle.mjs applies to dependencies, each checked on its own: what it changes, and that
 * the dependency still behaves as before.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { lazyAesTables, lazyListFormat } from '../../scripts/bundle.mjs';
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

/** Counts the 65,536-entry typed arrays made (noble-ciphers' AES tables), in `aesTablesMade()`. */
const COUNTING_TABLES = [
  'let made = 0;',
  "for (const name of ['Uint32Array', 'Uint16Array']) {",
  '  const real = globalThis[name];',
  '  globalThis[name] = new Proxy(real, { construct: (t, a, n) => (a[0] === 65536 && made++, Reflect.construct(t, a, n)) });',
  '}',
  'globalThis.aesTablesMade = () => made;',
].join('\n');

/**
 * Loads the openpgp given as argv[2], notes the tables made so far, then encrypts a text with a password in AES
 * OCB (which runs on noble-ciphers' AES: the tables) and decrypts argv[3] (a message armored by the other
 * build, when given) with the same password.
 */
const ROUND_TRIP = [
  'const pgp = require(process.argv[2]);',
  '(async () => {',
  '  const atLoad = aesTablesMade();',
  '  const config = { aeadProtect: true, preferredAEADAlgorithm: pgp.enums.aead.ocb };',
  "  const message = await pgp.createMessage({ text: 'made by ' + process.argv[4] });",
  "  const armored = await pgp.encrypt({ message, passwords: ['secret'], config });",
  '  const other = process.argv[3];',
  '  const read = other ? await pgp.readMessage({ armoredMessage: other }) : undefined;',
  "  const text = read ? (await pgp.decrypt({ message: read, passwords: ['secret'] })).data : undefined;",
  '  console.log(JSON.stringify({ atLoad, afterUse: aesTablesMade(), armored, text }));',
  '})();',
].join('\n');

describe("lazyAesTables: openpgp's AES tables are built on first use", () => {
  it('none when it loads; once used, the same tables: messages from either build decrypt in the other', async () => {
    const dir = tempDir('lazy-aes-tables');
    const counting = path.join(dir, 'counting.cjs');
    const roundTrip = path.join(dir, 'round-trip.cjs');
    fs.writeFileSync(counting, COUNTING_TABLES);
    fs.writeFileSync(roundTrip, ROUND_TRIP);
    type Outcome = { atLoad: number; afterUse: number; armored: string; text?: string };
    const run = (openpgp: string, other: string, who: string): Outcome =>
      JSON.parse(
        execFileSync(process.execPath, ['--require', counting, roundTrip, openpgp, other, who], {
          cwd: REPO_ROOT,
          encoding: 'utf8',
        }),
      ) as Outcome;
    const asIs = path.join(REPO_ROOT, 'node_modules', 'openpgp', 'dist', 'node', 'openpgp.min.cjs');
    const built = path.join(dir, 'openpgp.cjs');
    await esbuild.build({
      stdin: { contents: `module.exports = require(${JSON.stringify(asIs)});`, resolveDir: REPO_ROOT },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: built,
      logLevel: 'silent',
      plugins: [lazyAesTables()],
    });
    // The package as it is: two table sets (encryption, decryption) of three arrays each, made as it loads.
    const first = run(asIs, '', 'the package');
    expect(first.atLoad).toBe(6);
    const lazy = run(built, first.armored, 'the bundle');
    expect(lazy.atLoad).toBe(0);
    expect(lazy.afterUse).toBe(6);
    expect(lazy.text).toBe('made by the package');
    expect(run(asIs, lazy.armored, 'the package').text).toBe('made by the bundle');
  });
});
