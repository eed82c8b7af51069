// The semantic-release configuration (docs/releasing.md). On every push to main the release workflow
// (.github/workflows/release.yml) runs `npx semantic-release` with it: the commits since the last v* tag decide
// the next version (conventional commits: fix → patch, feat → minor, a breaking change → major), and then, in
// plugin order within each step:
//
//   prepare   changelog  CHANGELOG.md gets the release notes
//             npm        `npm version <next> --no-git-tag-version` (package.json and package-lock.json), then
//                        `npm pack` (prepack runs the build) into build/npm/
//             exec       `npm run build:action` (action/main.cjs) and `npm run build:binary`
//                        (build/provider-<platform>-<arch>): after npm's step, so both are built from the
//                        package.json that already carries the new version; scripts/check-release-build.mjs
//                        then refuses a binary that does not report it
//             git        commits CHANGELOG.md, package.json, package-lock.json and action/main.cjs as
//                        `chore(release): <next> [skip ci]` and pushes it to main
//   (semantic-release tags that commit v<next> and pushes the tag)
//   publish   npm        `npm publish` to the npm registry by trusted publishing: in the release job the
//                        plugin and npm trade the job's GitHub OIDC token for a short-lived publish token
//                        (no npm token is stored anywhere) and npm attaches provenance on its own
//             github     the GitHub release with the notes and the tarball, the linux-x64 binary and the
//                        action bundle attached
//
// RELEASE_DRY_OFFLINE=1 selects the offline exercise: the same plugins with the same options except that npm
// does not publish and the plugins that need a network service (NETWORK_PLUGINS) are left out, and it is a dry
// run, so nothing is pushed (only an explicit --no-dry-run, with --repository-url naming a local bare repository,
// goes further). test/release/release-job.test.ts runs both against a local bare repository.

/**
 * A semantic-release plugin entry: its package name and its options.
 * @typedef {[string, Record<string, unknown>]} PluginEntry
 */

/** The plugins that need a network service (the GitHub API), so that the offline exercise leaves out. */
export const NETWORK_PLUGINS = ['@semantic-release/github'];

/** Where `npm pack` leaves the tarball (npm's `tarballDir`), for the GitHub release to attach it. */
export const TARBALL_DIR = 'build/npm';

/** The environment variable that selects the offline exercise (its value must be `1`). */
export const OFFLINE_SWITCH = 'RELEASE_DRY_OFFLINE';

/**
 * The configuration for an environment: the real release, or the offline exercise when
 * `env.RELEASE_DRY_OFFLINE` is `1`.
 * @param {Record<string, string | undefined>} env
 */
export function releaseConfig(env) {
  const offline = env[OFFLINE_SWITCH] === '1';
  const preset = 'conventionalcommits';
  /** @type {PluginEntry[]} */
  const plugins = [
    ['@semantic-release/commit-analyzer', { preset }],
    ['@semantic-release/release-notes-generator', { preset }],
    ['@semantic-release/changelog', { changelogFile: 'CHANGELOG.md' }],
    ['@semantic-release/npm', { npmPublish: !offline, tarballDir: TARBALL_DIR }],
    [
      '@semantic-release/exec',
      {
        prepareCmd:
          'npm run build:action && npm run build:binary && ' +
          'node scripts/check-release-build.mjs ${nextRelease.version}',
      },
    ],
    [
      '@semantic-release/git',
      {
        assets: ['CHANGELOG.md', 'package.json', 'package-lock.json', 'action/main.cjs'],
        message: 'chore(release): ${nextRelease.version} [skip ci]',
      },
    ],
    [
      '@semantic-release/github',
      {
        assets: [
          { path: `${TARBALL_DIR}/*.tgz`, label: 'npm package (tarball)' },
          { path: 'build/provider-linux-x64', label: 'provider for Linux x64 (single executable)' },
          { path: 'action/main.cjs', label: 'GitHub Action bundle (action/main.cjs)' },
        ],
      },
    ],
  ];
  return {
    branches: ['main'],
    tagFormat: 'v${version}',
    ...(offline ? { dryRun: true } : {}),
    plugins: offline ? plugins.filter(([name]) => !NETWORK_PLUGINS.includes(name)) : plugins,
  };
}

export default releaseConfig(process.env);
