/**
 * What ESLint enforces in src/ beyond the presets (the walls between folders and the import circles are
 * dependency-cruiser's: test/import-walls.test.ts): only src/cli/ reads the process, and the sizes. As
 * eslint.config.js enforces them: each snippet is linted with the
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

const PROCESS_WALL = 'Only src/cli/ reads the process';

/** Expects exactly one problem: `rule`, with a message holding `words`. */
function expectRefused(problems: Problem[], rule: string, words: string): void {
  expect(problems).toHaveLength(1);
  expect(problems[0]?.rule).toBe(rule);
  expect(problems[0]?.message).toContain(words);
}

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
    ['src/commands/manage/x.ts', 'export const uid = process.getuid?.();\n', 'process.getuid'],
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

describe('zod is imported as a namespace, so the bundle keeps only what is used', () => {
  it.each(['src/registry/x.ts', 'src/cli/x.ts'])(
    "%s: import { z } from 'zod' is refused",
    async (filePath) => {
      const problems = await lint(filePath, "import { z } from 'zod';\nexport const s = z.string();\n");
      expectRefused(problems, 'no-restricted-syntax', "import * as z from 'zod'");
    },
  );

  it('import * as z passes, and so does a type-only import of z', async () => {
    expect(
      await lint('src/registry/x.ts', "import * as z from 'zod';\nexport const s = z.string();\n"),
    ).toEqual([]);
    expect(
      await lint('src/registry/x.ts', "import type { z } from 'zod';\nexport type S = z.ZodType;\n"),
    ).toEqual([]);
  });
});

describe('the sizes a maintainer reads in src/', () => {
  const lines = (count: number, prefix = '') =>
    Array.from({ length: count }, (_, i) => `${prefix}export const x${i} = ${i};`).join('\n') + '\n';

  it('a file of 401 lines is refused, one of 400 passes', async () => {
    expectRefused(await lint('src/publish/x.ts', lines(401)), 'max-lines', 'Maximum allowed is 400');
    expect(await lint('src/publish/x.ts', lines(400))).toEqual([]);
  });

  it('a function of 101 lines is refused, one of 100 passes', async () => {
    const body = (count: number) =>
      `export function f(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(count - 4)}  return n;\n}\n`;
    expectRefused(
      await lint('src/publish/x.ts', body(101)),
      'max-lines-per-function',
      'Maximum allowed is 100',
    );
    expect(await lint('src/publish/x.ts', body(100))).toEqual([]);
  });

  it('outside src/ (tests, scripts) the sizes are not rules', async () => {
    expect(await lint('scripts/x.mjs', lines(450))).toEqual([]);
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
