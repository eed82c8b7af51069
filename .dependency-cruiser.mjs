// The walls between the folders of src/ and the rule against import circles, checked by dependency-cruiser
// (`npm run lint` runs it after ESLint). dependency-cruiser resolves every import to the file it names (through
// tsconfig.json, type-only imports included), so a wall is a pair of real paths, not a guess from an import's
// spelling. The README's "Architecture" section draws these layers; test/lint-walls.test.ts proves each rule
// fires with its message. ESLint keeps the one wall that is not an import: only src/cli/ reads the process.

/**
 * The layers of src/, lowest first. A folder imports only from folders on lower layers and from the modules at
 * the top of src/ (src/errors.ts), never from a folder on its own layer or above: so no circle between folders
 * can form.
 */
export const LAYERS = [
  ['terraform'],
  ['net', 'ui', 'config'],
  ['release', 'registry', 'emulator'],
  ['lockfile', 'consumer'],
  ['publish', 'mirror', 'runtask'],
  ['commands'],
  ['cli'],
];

/**
 * What to do instead, per folder, when its wall is hit (the layer rule's own message says which layer).
 * @type {Record<string, string>}
 */
const ADVICE = {
  terraform:
    'src/terraform/ is the vocabulary every side shares (names, formats, hash rules, the run task wire format): ' +
    'it imports nothing of the product.',
  release:
    'Verification does not use the registry client: take a lookup function or the data as a parameter from ' +
    'the command; share wire facts through src/terraform/.',
  registry:
    'The registry client does not import verification: declare what it needs as an interface on its side (as ' +
    'uploads declare their chunk source) and let the caller pass it in.',
  emulator:
    "The emulator is the platform's side of the wire: it shares only src/terraform/ (and src/net/) with the " +
    "product, never the product's code, so that a bug on one side never agrees with itself on the other.",
  cli: 'Only src/cli/ imports src/cli/: the CLI calls the cores, never the reverse.',
};

const folders = LAYERS.flat();

/**
 * One rule per folder: what it must not import (every folder on its layer or above but itself).
 * @param {string} folder
 * @param {number} layer
 * @returns {import('dependency-cruiser').IForbiddenRuleType}
 */
function layerRule(folder, layer) {
  const above = LAYERS.slice(layer)
    .flat()
    .filter((other) => other !== folder);
  const below = LAYERS.slice(0, layer).flat();
  const allowed =
    below.length === 0 ? 'only the modules at the top of src/' : `${below.join('/, ')}/ and src/*.ts`;
  return {
    name: `layer-${folder}`,
    severity: /** @type {const} */ ('error'),
    comment:
      `src/${folder}/ is on layer ${layer} of the architecture (README "Architecture"): it imports ${allowed}, ` +
      `never ${above.join('/, ')}/. Move what both need down a layer. ${ADVICE[folder] ?? ''}`.trim(),
    from: { path: `^src/${folder}/` },
    to: { path: `^src/(${above.join('|')})/` },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle between files: two files that need each other share a third (a type module, or the ' +
        'piece both use); type-only imports count.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...LAYERS.flatMap((layer, index) => layer.map((folder) => layerRule(folder, index))),
    {
      name: 'cli-wall',
      severity: 'error',
      comment: `${ADVICE.cli} Declare what the core needs (its options, the run context) in the core or a shared module.`,
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'emulator-side',
      severity: 'error',
      comment: ADVICE.emulator,
      from: { path: '^src/emulator/' },
      to: { path: '^src/', pathNot: ['^src/(emulator|terraform|net)/', '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'terraform-leaf',
      severity: 'error',
      comment: ADVICE.terraform,
      from: { path: '^src/terraform/' },
      to: { path: '^src/', pathNot: '^src/terraform/' },
    },
    {
      name: 'top-of-src',
      severity: 'error',
      comment: `The modules at the top of src/ (errors.ts) are below every folder: they import none of ${folders.join('/, ')}/.`,
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: `^src/(${folders.join('|')})/` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
