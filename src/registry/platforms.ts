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
