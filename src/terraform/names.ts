/**
 * What Terraform and the registry API call things, in one place: the JSON:API media type the platform's API
 * speaks, the plugin protocol versions a provider version may declare, the os/arch platform names (Go's GOOS and
 * GOARCH, written `os_arch`), what counts as a version, and how a number of bytes is written for people.
 */
import semverParse from 'semver/functions/parse.js';

/** The JSON:API media type of the platform's API (`/api/v2`), for `Content-Type` and `Accept`. */
export const JSONAPI = 'application/vnd.api+json';

/** Plugin protocol versions the registry accepts for a provider version. */
export const PROTOCOL_VERSIONS = ['4.0', '5.0', '6.0'] as const;

/** One of `PROTOCOL_VERSIONS`. */
export type ProtocolVersion = (typeof PROTOCOL_VERSIONS)[number];

/** True for a protocol version the registry accepts. */
export function isProtocolVersion(text: string): text is ProtocolVersion {
  return (PROTOCOL_VERSIONS as readonly string[]).includes(text);
}

/** A list of protocol versions as the registry keeps it: each once, in order. */
export function normalizeProtocols(list: readonly string[]): string[] {
  return [...new Set(list)].sort();
}

/** A platform: Go's GOOS and GOARCH. */
export interface PlatformKey {
  os: string;
  arch: string;
}

/** `os_arch` (`linux_amd64`): a platform's name in file names, messages, flags and maps. */
export function platformName(p: PlatformKey): string {
  return `${p.os}_${p.arch}`;
}

/**
 * Platforms in the order every list of them uses: by os, then arch, compared by UTF-16 code units (as
 * `Array.prototype.sort` compares strings). Not `localeCompare`: its order depends on the machine's locale,
 * and its first call pages in ICU's collation data, some 3 MB of resident memory in a publish.
 */
export function comparePlatforms(a: PlatformKey, b: PlatformKey): number {
  return compareCodeUnits(a.os, b.os) || compareCodeUnits(a.arch, b.arch);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reads `linux_amd64` or `linux/amd64` (lower-case letters and digits on each side); `undefined` otherwise. */
export function parsePlatformName(text: string): PlatformKey | undefined {
  const match = /^([a-z0-9]+)[_/]([a-z0-9]+)$/.exec(text.trim());
  return match ? { os: match[1]!, arch: match[2]! } : undefined;
}

/**
 * The os/arch pairs Go can build for (`go tool dist list`, Go 1.24). The registry validates a platform's
 * os/arch server-side; the accepted list is not documented, so both the verifier and the emulator use Go's.
 */
const GO_PLATFORMS = `aix/ppc64 android/386 android/amd64 android/arm android/arm64 darwin/amd64 darwin/arm64
dragonfly/amd64 freebsd/386 freebsd/amd64 freebsd/arm freebsd/arm64 freebsd/riscv64 illumos/amd64 ios/amd64
ios/arm64 js/wasm linux/386 linux/amd64 linux/arm linux/arm64 linux/loong64 linux/mips linux/mips64
linux/mips64le linux/mipsle linux/ppc64 linux/ppc64le linux/riscv64 linux/s390x netbsd/386 netbsd/amd64
netbsd/arm netbsd/arm64 openbsd/386 openbsd/amd64 openbsd/arm openbsd/arm64 openbsd/ppc64 openbsd/riscv64
plan9/386 plan9/amd64 plan9/arm solaris/amd64 wasip1/wasm windows/386 windows/amd64 windows/arm windows/arm64`;

const KNOWN = new Set(GO_PLATFORMS.split(/\s+/));

/** The platforms HashiCorp recommends building; anything else is legal but unusual. */
const COMMON = new Set([
  'darwin/amd64',
  'darwin/arm64',
  'linux/amd64',
  'linux/arm64',
  'linux/arm',
  'linux/386',
  'windows/amd64',
  'windows/386',
  'windows/arm64',
  'freebsd/386',
  'freebsd/amd64',
  'freebsd/arm',
  'freebsd/arm64',
]);

/** Every pair Go can build for, as `os_arch` names, in Go's order. */
export function knownPlatformNames(): string[] {
  return [...KNOWN].map((pair) => pair.replace('/', '_'));
}

/** The pairs HashiCorp recommends building, as `os_arch` names, in Go's order. */
export function commonPlatformNames(): string[] {
  return [...KNOWN].filter((pair) => COMMON.has(pair)).map((pair) => pair.replace('/', '_'));
}

/** True when Go knows the os/arch pair. */
export function isKnownPlatform(os: string, arch: string): boolean {
  return KNOWN.has(`${os}/${arch}`);
}

/** True for a pair outside the commonly built set (worth a warning, not an error). */
export function isUnusualPlatform(os: string, arch: string): boolean {
  return isKnownPlatform(os, arch) && !COMMON.has(`${os}/${arch}`);
}

/** True when Go knows the operating system at all (used to point an error at `os` or at `arch`). */
export function isKnownOs(os: string): boolean {
  return [...KNOWN].some((pair) => pair.startsWith(`${os}/`));
}

/** A number of bytes for people, in powers of 1024: `512 B`, `2.2 KiB`, `256.0 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * True for a provider version as the wire has it: a strict semantic version written exactly as semver.org 2.0.0
 * defines it (pre-release and build metadata allowed, no leading `v` or `=`), parsed by the `semver` package.
 */
export function isStrictSemver(text: string): boolean {
  if (!/^\d/.test(text)) return false;
  const parsed = semverParse(text, { loose: false });
  return parsed !== null && parsed.raw === text;
}
