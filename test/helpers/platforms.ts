/** The platforms of the fixture release (fixtures/release), one list for every suite that names them. */

const FIXTURE_PLATFORMS = [
  'darwin_amd64',
  'darwin_arm64',
  'linux_amd64',
  'linux_arm64',
  'windows_amd64',
] as const;

/** One of the fixture release's platforms (`<os>_<arch>`). */
export type Platform = (typeof FIXTURE_PLATFORMS)[number];

/**
 * The fixture release's platforms, sorted: also their order in its SHA256SUMS. A plain array, so that it goes
 * where a `string[]` is asked for; a test that wants another list makes its own from it (`[...PLATFORMS, …]`).
 */
export const PLATFORMS: Platform[] = [...FIXTURE_PLATFORMS];
