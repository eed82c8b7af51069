/**
 * The walls between the layers of src/, as eslint.config.js enforces them: each snippet is linted with the
 * repository's own configuration, as if it were the file named (ESLint's Node API, `lintText` with a path), and
 * must be refused by the wall, with the message that says what to do instead, or pass. Also: the type-checked
 * preset is on where tsconfig.json type-checks. The snippets' files do not exist, and the project service only
 * types files that do, so they are linted without the type-aware rules (the walls are not type-aware).
 */
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** One problem ESLint reported: the rule and its message. */
interface Problem {
  rule: string | null;
  message: string;
}

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });
});

/** What ESLint reports for `code` as the file `filePath` (relative to the repository). */
async function lint(filePath: string, code: string): Promise<Problem[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => ({ rule: m.ruleId, message: m.message }));
}

const CLI_WALL = 'Only src/cli/ imports src/cli/: the CLI calls the cores, never the reverse.';
const PROCESS_WALL = 'Only src/cli/ reads the process';
const REGISTRY_WALL = 'Verification (src/release/) and the emulator do not use the registry client';
const EMULATOR_WALL = "The emulator is the platform's side of the wire";
const WIRE_WALL = 'src/runtask/wire/ is the run task wire format every side shares';

/** Expects exactly one problem: `rule`, with a message holding `words`. */
function expectRefused(problems: Problem[], rule: string, words: string): void {
  expect(problems).toHaveLength(1);
  expect(problems[0]?.rule).toBe(rule);
  expect(problems[0]?.message).toContain(words);
}

describe('nothing outside src/cli/ imports src/cli/', () => {
  it.each([
    ['an import', 'src/commands/x.ts', "import { main } from '../cli/main.js';\nexport const run = main;\n"],
    [
      'a type-only import',
      'src/commands/x.ts',
      "import type { CliIo } from '../cli/context.js';\nexport type Io = CliIo;\n",
    ],
    ['a re-export', 'src/commands/x.ts', "export { main } from '../cli/main.js';\n"],
    [
      'an import from deeper down',
      'src/commands/runtask/x.ts',
      "import { main } from '../../cli/main.js';\nexport const run = main;\n",
    ],
    ['an import by a module at the top of src/', 'src/x.ts', "export { main } from './cli/main.js';\n"],
    [
      'an import by the emulator',
      'src/emulator/routes/x.ts',
      "import type { CliIo } from '../../cli/context.js';\nexport type Io = CliIo;\n",
    ],
  ])('%s is refused (%s)', async (_what, filePath, code) => {
    expectRefused(await lint(filePath, code), 'no-restricted-imports', CLI_WALL);
  });

  it('a dynamic import() is refused too', async () => {
    const problems = await lint('src/commands/x.ts', "export const load = () => import('../cli/main.js');\n");
    expectRefused(problems, 'no-restricted-syntax', CLI_WALL);
  });

  it('src/cli/ imports itself and the cores', async () => {
    const code =
      "import { main } from './main.js';\nimport { runPublish } from '../commands/publish.js';\n" +
      'export const both = [main, runPublish];\n';
    expect(await lint('src/cli/x.ts', code)).toEqual([]);
  });
});

describe('nothing outside src/cli/ reads process.*', () => {
  it.each([
    ['src/commands/x.ts', 'export const token = process.env.TFE_TOKEN;\n', 'process.env'],
    ['src/commands/x.ts', 'export const args = process.argv.slice(2);\n', 'process.argv'],
    ['src/registry/x.ts', "process.stdout.write('x');\n", 'process.stdout'],
    ['src/ui/x.ts', "process.stderr.write('x');\n", 'process.stderr'],
    ['src/runtask/server/x.ts', 'export const input = process.stdin;\n', 'process.stdin'],
    ['src/publish/x.ts', 'process.exit(1);\n', 'process.exit'],
    ['src/publish/x.ts', 'process.exitCode = 1;\n', 'process.exitCode'],
    ['src/config/x.ts', 'export const here = process.cwd();\n', 'process.cwd'],
    ['src/config/x.ts', "process.chdir('/');\n", 'process.chdir'],
    ['src/emulator/x.ts', "process.on('SIGINT', () => undefined);\n", 'process.on'],
    ['src/emulator/x.ts', "process.once('SIGTERM', () => undefined);\n", 'process.once'],
    ['src/emulator/x.ts', "process.off('SIGTERM', () => undefined);\n", 'process.off'],
    ['src/manage/x.ts', 'export const uid = process.getuid?.();\n', 'process.getuid'],
    ['src/errors.ts', 'export const token = process.env.TFE_TOKEN;\n', 'process.env'],
  ])('%s: %s is refused', async (filePath, code, what) => {
    const problems = await lint(filePath, code);
    expectRefused(problems, 'no-restricted-properties', PROCESS_WALL);
    expect(problems[0]?.message).toContain(`'${what}'`);
  });

  it('reading it by destructuring is refused', async () => {
    const problems = await lint(
      'src/commands/x.ts',
      'const { env } = process;\nexport const token = env.X;\n',
    );
    expectRefused(problems, 'no-restricted-properties', PROCESS_WALL);
  });

  it.each(['node:process', 'process'])("importing env from '%s' is refused", async (module) => {
    const problems = await lint(
      'src/commands/x.ts',
      `import { env } from '${module}';\nexport const x = env.X;\n`,
    );
    expectRefused(problems, 'no-restricted-imports', PROCESS_WALL);
  });

  it('facts about the OS are allowed anywhere: pid, kill, platform, execPath, getBuiltinModule', async () => {
    const code =
      'export const facts = [process.pid, process.platform, process.execPath];\n' +
      'export const alive = (pid: number) => process.kill(pid, 0);\n' +
      "export const fs = () => process.getBuiltinModule('node:fs');\n";
    expect(await lint('src/runtask/server/x.ts', code)).toEqual([]);
  });

  it.each(['src/cli/x.ts', 'test/x.test.ts', 'bench/x.mjs', 'scripts/x.mjs'])(
    '%s may read the process',
    async (filePath) => {
      const code = 'export const token = process.env.TFE_TOKEN;\nprocess.exitCode = 0;\n';
      expect(await lint(filePath, code)).toEqual([]);
    },
  );
});

describe('verification (src/release/) and the emulator do not import the registry client', () => {
  it.each([
    [
      'src/release/x.ts',
      "import { createRegistryClient } from '../registry/http.js';\nexport const c = createRegistryClient;\n",
    ],
    ['src/release/x.ts', "export { listGpgKeys } from '../registry/gpgKeys.js';\n"],
    [
      'src/release/x.ts',
      "import type { RegistryClient } from '../registry/http.js';\nexport type C = RegistryClient;\n",
    ],
    ['src/emulator/routes/x.ts', "export { createRegistryClient } from '../../registry/http.js';\n"],
  ])('%s: %s is refused', async (filePath, code) => {
    expectRefused(await lint(filePath, code), 'no-restricted-imports', REGISTRY_WALL);
  });

  it('a dynamic import() of the client is refused too', async () => {
    const problems = await lint(
      'src/release/x.ts',
      "export const load = () => import('../registry/gpgKeys.js');\n",
    );
    expectRefused(problems, 'no-restricted-syntax', REGISTRY_WALL);
  });

  it('the wire facts (types, version, platforms) may be imported', async () => {
    const code =
      "import type { GpgKeyResource } from '../registry/types.js';\n" +
      "import { isStrictSemver } from '../registry/version.js';\n" +
      "import { isKnownOs } from '../registry/platforms.js';\n" +
      'export type Key = GpgKeyResource;\nexport const both = [isStrictSemver, isKnownOs];\n';
    expect(await lint('src/release/x.ts', code)).toEqual([]);
    expect(await lint('src/emulator/x.ts', code)).toEqual([]);
  });

  it('the commands may still use the client', async () => {
    const code =
      "import { createRegistryClient } from '../registry/http.js';\nexport const c = createRegistryClient;\n";
    expect(await lint('src/commands/x.ts', code)).toEqual([]);
  });
});

describe("the emulator (the platform's side) does not import the product's side", () => {
  it.each([
    ['src/emulator/x.ts', '../commands/publish.js'],
    ['src/emulator/x.ts', '../publish/plan.js'],
    ['src/emulator/routes/x.ts', '../../manage/views.js'],
    ['src/emulator/x.ts', '../consumer/check.js'],
    ['src/emulator/runtask/x.ts', '../../runtask/server/jobs.js'],
    ['src/emulator/runtask/x.ts', '../../runtask/callback/client.js'],
    ['src/emulator/runtask/x.ts', '../../runtask/send/post.js'],
  ])('%s importing %s is refused', async (filePath, module) => {
    const problems = await lint(filePath, `export * from '${module}';\n`);
    expectRefused(problems, 'no-restricted-imports', EMULATOR_WALL);
  });

  it('it imports the run task wire format and its own modules', async () => {
    const code = "export * from '../../runtask/wire/payload.js';\nexport * from '../routes/versions.js';\n";
    expect(await lint('src/emulator/runtask/x.ts', code)).toEqual([]);
  });
});

describe('the run task wire format (src/runtask/wire/) imports no side', () => {
  it.each([
    '../server/jobs.js',
    '../callback/client.js',
    '../send/post.js',
    '../../emulator/runtask/issue.js',
    '../../commands/runtask/send.js',
  ])('importing %s is refused', async (module) => {
    const problems = await lint('src/runtask/wire/x.ts', `export * from '${module}';\n`);
    expectRefused(problems, 'no-restricted-imports', WIRE_WALL);
  });

  it('it imports its own modules', async () => {
    expect(await lint('src/runtask/wire/x.ts', "export * from './hmac.js';\n")).toEqual([]);
  });
});

describe('the type-checked preset', () => {
  it.each(['src/errors.ts', 'test/lint-walls.test.ts', 'bench/run.mjs', 'scripts/readme-figures.mjs'])(
    'is on for %s (type-checked by tsconfig.json)',
    async (file) => {
      const config = (await new ESLint({ cwd: root }).calculateConfigForFile(file)) as {
        rules: Record<string, unknown[]>;
        languageOptions: { parserOptions: { projectService?: unknown } };
      };
      expect(config.languageOptions.parserOptions.projectService).toBe(true);
      for (const rule of ['no-floating-promises', 'no-unsafe-assignment', 'restrict-template-expressions'])
        expect(config.rules[`@typescript-eslint/${rule}`]?.[0]).toBe(2);
    },
  );
});
