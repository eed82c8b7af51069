// One linter configuration for the whole repository (flat config): typescript-eslint's type-checked preset for
// everything tsconfig.json type-checks (src/, test/**/*.ts, bench/, scripts/, this file), the plain preset for
// the few JavaScript files it does not (bin/, test/**/*.mjs), and the walls between the layers of src/ as rules
// whose messages say what to do instead (test/lint-walls.test.ts proves each one fires).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** What tsconfig.json type-checks, so what the type-aware rules can lint. */
const TYPE_CHECKED = ['**/*.ts', 'bench/**/*.mjs', 'scripts/**/*.{js,mjs}', 'eslint.config.js'];

/**
 * A wall: imports whose path matches `regex` (a relative import, resolved by name: no other folder of src/ has
 * these names) are refused with `message`. Static imports, `export … from` and `import()` alike.
 * @typedef {{ regex: string, message: string }} Wall
 */

/** @type {Wall} Only the CLI wiring knows the CLI. */
const CLI = {
  regex: String.raw`^(\.{1,2}/)+cli/`,
  message:
    'Only src/cli/ imports src/cli/: the CLI calls the cores, never the reverse. Declare what the core needs ' +
    '(its options, the run context) in the core or a shared module, and let src/cli/ import that.',
};

/** @type {Wall} Verification and the emulator never talk to a registry. */
const REGISTRY_CLIENT = {
  regex: String.raw`^(\.{1,2}/)+registry/(?!(types|version|platforms)\.js$)`,
  message:
    'Verification (src/release/) and the emulator do not use the registry client: take a lookup function ' +
    '(e.g. a key lookup) or the data as a parameter from the command. Only the wire facts ' +
    'registry/types.js, version.js and platforms.js may be imported.',
};

/** @type {Wall} The emulator is the platform's side of the wire. */
const EMULATOR_SIDE = {
  regex: String.raw`^(\.{1,2}/)+(commands|publish|manage|consumer|runtask/(server|callback|send))/`,
  message:
    "The emulator is the platform's side of the wire: it does not import the product's commands, publish, " +
    'manage, consumer or run task server/callback/send code. Share wire facts only (src/registry/types.ts, ' +
    'src/runtask/wire/): move what both sides need there.',
};

/** @type {Wall} The run task wire format belongs to no side. */
const WIRE_SIDE = {
  regex: String.raw`^(\.\./(server|callback|send)/|(\.\./)+(runtask/(server|callback|send)|emulator|commands|publish)/)`,
  message:
    'src/runtask/wire/ is the run task wire format every side shares: it imports no side (runtask/server, ' +
    'callback, send, the emulator, commands). Move the piece both need into wire/ instead.',
};

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
 * The walls for the files matching `files`: every list must be whole, because a later config object's options
 * for a rule replace an earlier one's (they do not add up).
 * @param {string[]} files
 * @param {Wall[]} walls
 * @param {string[]} [ignores]
 * @returns {import('eslint').Linter.Config}
 */
function walled(files, walls, ignores = []) {
  return {
    files,
    ignores,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          // `import { env } from 'node:process'` is process.env by another name.
          paths: ['node:process', 'process'].map((name) => ({
            name,
            importNames: PROCESS_CONTEXT,
            message: PROCESS_MESSAGE,
          })),
          patterns: walls.map(({ regex, message }) => ({ regex, message })),
        },
      ],
      // The same walls for `import('…')`, which no-restricted-imports does not see. esquery's regular
      // expressions cannot hold a slash, hence \x2F.
      'no-restricted-syntax': [
        'error',
        ...walls.map(({ regex, message }) => ({
          selector: `ImportExpression[source.value=/${regex.replaceAll('/', String.raw`\x2F`)}/]`,
          message,
        })),
      ],
    },
  };
}

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

  // The walls. From the most general area to the most specific: each lists every wall that holds there.
  walled(['src/**/*.ts'], [CLI], ['src/cli/**']),
  walled(['src/release/**/*.ts'], [CLI, REGISTRY_CLIENT]),
  walled(['src/emulator/**/*.ts'], [CLI, REGISTRY_CLIENT, EMULATOR_SIDE]),
  walled(['src/runtask/wire/**/*.ts'], [CLI, WIRE_SIDE]),
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...PROCESS_CONTEXT.map((property) => ({ object: 'process', property, message: PROCESS_MESSAGE })),
      ],
    },
  },
);
