// One linter configuration for the whole repository (flat config): typescript-eslint's type-checked preset for
// everything tsconfig.json type-checks (src/, test/**/*.ts, bench/, scripts/, this file), the plain preset for
// the few JavaScript files it does not (bin/, test/**/*.mjs), the sizes a maintainer reads in src/, and the one
// wall that is not an import: only src/cli/ reads the process (test/lint-walls.test.ts proves each fires). The
// walls between the folders of src/ and the rule against import circles are dependency-cruiser's
// (.dependency-cruiser.mjs), which resolves imports to files; `npm run lint` runs both.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** What tsconfig.json type-checks, so what the type-aware rules can lint. */
const TYPE_CHECKED = [
  '**/*.ts',
  'bench/**/*.mjs',
  'scripts/**/*.{js,mjs}',
  'eslint.config.js',
  '.dependency-cruiser.mjs',
];

const PROCESS_MESSAGE =
  'Only src/cli/ reads the process (its environment, arguments, streams, exit code, working folder, ' +
  'signals, user): take it from the run context or the options src/cli/ passes in. Facts about the OS ' +
  '(process.pid, kill, platform, execPath, getBuiltinModule) are allowed.';

/**
 * The process as a program's context: below src/cli/ it comes in as parameters. Not listed, so allowed: the
 * facts about the OS (`process.pid`, `process.kill`, `process.platform`, `process.execPath`,
 * `process.getBuiltinModule`), which are the same whoever runs the program.
 */
const PROCESS_CONTEXT = [
  ...['env', 'argv', 'stdin', 'stdout', 'stderr', 'exit', 'exitCode', 'cwd', 'chdir'],
  ...['on', 'once', 'off', 'getuid'],
];

/**
 * zod's `z` export is the whole library as one object: importing it keeps every schema type and every locale in
 * the bundle (686 KB where `import * as z` leaves 196 KB), and loading it cost `provider versions list` some
 * 17 ms of start-up.
 */
const ZOD_NAMESPACE = {
  selector:
    "ImportDeclaration[source.value='zod'][importKind='value'] > ImportSpecifier[imported.name='z'][importKind='value']",
  message: "Write `import * as z from 'zod'`: the `z` object keeps all of zod and its locales in the bundle.",
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'fixtures/',
      'bench/results/',
      'action/main.cjs',
      'build/',
      '.cache/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: TYPE_CHECKED,
    extends: [tseslint.configs.recommendedTypeCheckedOnly],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // Test doubles implement async interfaces (a fake `create`, `sleep` or `reconcile`) without awaiting anything:
    // in tests that is the point, not a slip, so this one type-checked rule stays for src/ only.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // Only the output sink and the scripts talk to the console directly.
    files: ['scripts/**', 'bench/**', 'bin/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The shim is CommonJS (bin/provider.cjs says why): `require` is how it loads.
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // A house a maintainer reads (README "Architecture"): no file in src/ over 400 lines, no function over 100.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': [
        'error',
        { max: 100, skipBlankLines: false, skipComments: false, IIFEs: true },
      ],
    },
  },
  {
    // The process is the program's context: below src/cli/ it comes in as parameters (the run context).
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...PROCESS_CONTEXT.map((property) => ({ object: 'process', property, message: PROCESS_MESSAGE })),
      ],
      // `import { env } from 'node:process'` is process.env by another name.
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:process', 'process'].map((name) => ({
            name,
            importNames: PROCESS_CONTEXT,
            message: PROCESS_MESSAGE,
          })),
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ZOD_NAMESPACE] },
  },
);
