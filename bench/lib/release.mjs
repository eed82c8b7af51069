// Generated releases for the benchmarks: `example` <version> for the 13 platforms of the provider scaffold's
// build matrix, listed in a SHA256SUMS signed with the test-only `signer` key, at any size. Two shapes:
//   - `goreleaser` (what users publish): each zip as goreleaser writes it with Go's archive/zip, deflated, with
//     CHANGELOG.md, LICENSE and README.md beside an executable-like file that deflates to about half its size
//     (`executableLike`), as stripped Go binaries do;
//   - `stored`: each zip holds one executable of incompressible bytes, stored (kept as an extra row).
// The content is pseudo-random from a seed (the file's name and size), so every run generates the same bytes.
import { createCipheriv, createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as openpgp from 'openpgp';
import { KEYS, MiB } from './env.mjs';
import { writeZip } from './zip.mjs';

/** The scaffold's build matrix (peers.md §5): 13 os/arch pairs. */
export const PLATFORMS = [
  'darwin_amd64',
  'darwin_arm64',
  'freebsd_386',
  'freebsd_amd64',
  'freebsd_arm',
  'freebsd_arm64',
  'linux_386',
  'linux_amd64',
  'linux_arm',
  'linux_arm64',
  'windows_386',
  'windows_amd64',
  'windows_arm64',
];

/** The provider name of every generated release. */
export const NAME = 'example';

/** @typedef {Awaited<ReturnType<typeof makeRelease>>} Release a generated release, as the benchmarks know it */
/** @typedef {'goreleaser' | 'stored'} Shape how each platform's zip is made (see the top of this file) */

/** A goreleaser-shaped zip must deflate to this share of its content, or the generator is off. */
const EXPECTED_RATIO = { min: 0.4, max: 0.6 };

/**
 * Pseudo-random bytes from `seed`, `size` of them in chunks of at most 1 MiB (AES-256-CTR over zeros: fast and
 * the same for the same seed).
 * @param {string} seed
 * @param {number} size
 */
function* keystream(seed, size) {
  const cipher = createCipheriv('aes-256-ctr', createHash('sha256').update(seed).digest(), Buffer.alloc(16));
  const zeros = Buffer.alloc(MiB);
  for (let left = size; left > 0; left -= MiB) yield cipher.update(zeros.subarray(0, Math.min(MiB, left)));
}

/**
 * The content of an executable-like file: runs of random bytes (8–54 long) each followed by a copy (8–71
 * bytes) of what came 64 B to 2 KiB before, the lengths and distances drawn from the bytes themselves. Deflate
 * finds every copy and nothing in the random runs: the content deflates to about half (48.5 % at level 5), and
 * inflating it costs about what a Go binary's does (literals and matches interleaved, as in machine code).
 * Copies stay within a chunk (1 MiB), so chunks are made one at a time.
 * @param {string} seed
 * @param {number} size
 */
function* executableLike(seed, size) {
  for (const chunk of keystream(seed, size)) {
    const n = chunk.length;
    let at = 0;
    while (at < n) {
      const r = (chunk[at] ?? 0) | ((chunk[at + 1] ?? 0) << 8) | ((chunk[at + 2] ?? 0) << 16);
      at += 8 + (r & 31) + ((r >> 5) & 15);
      if (at >= n) break;
      const length = Math.min(n - at, 8 + ((r >> 9) & 63));
      const distance = Math.min(at, 64 + (r >> 15) * 4);
      if (distance >= 3) chunk.copyWithin(at, at - distance, at - distance + length);
      at += length;
    }
    yield chunk;
  }
}

/**
 * Text of `size` bytes: lines of words drawn from a small vocabulary (a LICENSE, a README, a CHANGELOG).
 * @param {string} seed
 * @param {number} size
 */
function* text(seed, size) {
  const words = ['the', 'provider', 'resource', 'data', 'source', 'terraform', 'version', 'license', 'any'];
  words.push('of', 'to', 'and', 'a', 'in', 'is', 'or', 'be', 'this', 'with', 'for', 'under', 'attribute');
  let out = '';
  for (const chunk of keystream(seed, size)) {
    for (let i = 0; i < chunk.length && out.length < size; i++) {
      const byte = chunk[i] ?? 0;
      out += `${words[byte % words.length]}${byte % 11 === 0 ? '\n' : ' '}`;
    }
  }
  yield Buffer.from(out.slice(0, size));
}

/**
 * The members of one platform's zip, in the order goreleaser adds them (its default extra files, then the
 * binary).
 * @param {Shape} shape
 * @param {string} exe the executable's name
 * @param {number} size the executable's size
 * @returns {import('./zip.mjs').Member[]}
 */
function members(shape, exe, size) {
  const seed = `${exe}/${size}`;
  if (shape === 'stored') return [{ name: exe, mode: 0o755, method: 0, chunks: () => keystream(seed, size) }];
  /** @type {[string, number][]} */
  const docs = [
    ['CHANGELOG.md', 6 * 1024],
    ['LICENSE', 16 * 1024],
    ['README.md', 2 * 1024],
  ];
  return [
    ...docs.map(([name, bytes]) => ({
      ...{ name, mode: 0o644, method: /** @type {const} */ (8) },
      chunks: () => text(`${name}/${seed}`, bytes),
    })),
    { name: exe, mode: 0o755, method: 8, chunks: () => executableLike(seed, size) },
  ];
}

/**
 * A release's shape in a few words, for a row's label: `13 × 32 MiB executables, deflated to 48 %` or
 * `13 × 32 MiB, stored`.
 * @param {{ platforms: number, size: number, shape: Shape, ratio: number }} release
 */
export function describe({ platforms, size, shape, ratio }) {
  const sizes = `${platforms} × ${size / MiB} MiB`;
  return shape === 'stored'
    ? `${sizes}, stored`
    : `${sizes} executables, deflated to ${Math.round(ratio * 100)} %`;
}

/**
 * The file's SHA-256, hex.
 * @param {string} file
 */
function sha256(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/**
 * A signed release of `example` (or `name`) `version` in `dir`: one zip per platform whose executable is `size` bytes
 * (shaped as `shape` says), the manifest, SHA256SUMS and its binary detached signature. Returns what the
 * benchmarks need to know about it: `size` is each executable's, `zipSize` the largest zip's, `ratio` the zips'
 * size over their content's.
 * @param {string} dir
 * @param {{ name?: string, version?: string, size: number, platforms?: string[], shape?: Shape }} options
 *   `name`: the provider's (default `example`)
 */
export async function makeRelease(
  dir,
  { name = NAME, version = '1.0.0', size, platforms = PLATFORMS, shape = 'stored' },
) {
  fs.mkdirSync(dir, { recursive: true });
  const prefix = `terraform-provider-${name}_${version}`;
  const lines = [];
  const zips = [];
  let [zipBytes, contentBytes, zipSize] = [0, 0, 0];
  for (const platform of platforms) {
    const filename = `${prefix}_${platform}.zip`;
    const exe = `terraform-provider-${name}_v${version}${platform.startsWith('windows') ? '.exe' : ''}`;
    const file = path.join(dir, filename);
    const written = await writeZip(file, members(shape, exe, size));
    const ratio = written.dataBytes / written.contentBytes;
    if (shape === 'goreleaser' && (ratio < EXPECTED_RATIO.min || ratio > EXPECTED_RATIO.max))
      throw new Error(
        `${filename} deflated to ${(ratio * 100).toFixed(1)} %, not about half: the generator is off`,
      );
    zipBytes += written.bytes;
    zipSize = Math.max(zipSize, written.bytes);
    contentBytes += written.contentBytes;
    zips.push(file);
    lines.push(`${written.sha256}  ${filename}`);
  }
  const manifest = `${prefix}_manifest.json`;
  fs.writeFileSync(path.join(dir, manifest), '{"version":1,"metadata":{"protocol_versions":["6.0"]}}\n');
  lines.push(`${sha256(path.join(dir, manifest))}  ${manifest}`);
  const sums = Buffer.from(
    lines
      .sort((a, b) => a.slice(66).localeCompare(b.slice(66)))
      .map((l) => `${l}\n`)
      .join(''),
  );
  const shasums = path.join(dir, `${prefix}_SHA256SUMS`);
  fs.writeFileSync(shasums, sums);
  const signingKeys = await openpgp.readPrivateKey({
    armoredKey: fs.readFileSync(path.join(KEYS, 'signer.sec.asc'), 'utf8'),
  });
  const message = await openpgp.createMessage({ binary: sums });
  // openpgp's types say Uint8Array for a binary signature of bytes only with its optional peer
  // @openpgp/web-stream-tools installed (its stream types); without it the type is unresolved.
  /** @type {Uint8Array} */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- unresolved without that peer (see above)
  const signature = await openpgp.sign({ message, signingKeys, detached: true, format: 'binary' });
  fs.writeFileSync(`${shasums}.sig`, signature);
  const files = [...zips, path.join(dir, manifest), shasums, `${shasums}.sig`];
  const bytes = files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
  const ratio = zipBytes / contentBytes;
  return {
    dir,
    name,
    version,
    prefix,
    zips,
    shasums,
    files,
    bytes,
    platforms: platforms.length,
    size,
    shape,
    ratio,
    zipSize,
  };
}
