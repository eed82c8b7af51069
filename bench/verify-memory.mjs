#!/usr/bin/env node
// Peak memory of `provider verify` on a small and a large release: 4 platform archives of 8 MiB executables,
// then of 256 MiB ones, shaped as goreleaser writes them (deflated to about half), signed with the test-only
// `signer` key (bench/lib/release.mjs). Hashing streams every file through fixed buffers (inflating included),
// so the large release must not need much more memory than the small one.
//
// Usage: npm run build && node bench/verify-memory.mjs [--keep] [--sizes 8,256]
// Needs about 600 MB of free space in the temporary folder. Prints one line per size and a JSON summary.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BIN, MiB, ROOT, SIGNER_PUBLIC_KEY, workDir } from './lib/env.mjs';
import { run } from './lib/proc.mjs';
import { makeRelease } from './lib/release.mjs';

const PLATFORMS = ['darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const sizesArg = args[args.indexOf('--sizes') + 1];
const sizes = args.includes('--sizes') && sizesArg ? sizesArg.split(',').map(Number) : [8, 256];

if (!fs.existsSync(path.join(ROOT, 'dist', 'commands', 'verify.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}

const measure = (/** @type {string} */ dir) =>
  run(process.execPath, [BIN, 'verify', dir, '--key', SIGNER_PUBLIC_KEY, '--json'], { peakRss: true });

const work = workDir('verify-memory');
const results = [];
try {
  for (const mb of sizes) {
    const dir = path.join(work, `release-${mb}mb`);
    process.stderr.write(`generating 4 × ${mb} MiB executables in ${dir}…\n`);
    const release = await makeRelease(dir, { size: mb * MiB, platforms: PLATFORMS, shape: 'goreleaser' });
    await measure(dir); // warm the page cache so the figure is about the program, not the disk
    const result = await measure(dir);
    if (result.code !== 0 || !result.stdout.includes('"ok":true')) {
      console.error(result.stdout, result.stderr);
      throw new Error(`verify failed on the ${mb} MiB release (exit ${result.code})`);
    }
    const peakMiB = (result.peakKiB ?? NaN) / 1024;
    results.push({
      executableMiB: mb,
      zippedMiB: +(release.ratio * mb * 4).toFixed(1),
      peakRssMiB: +peakMiB.toFixed(1),
      seconds: +(result.ms / 1000).toFixed(2),
    });
    console.log(
      `4 × ${String(mb).padStart(4)} MiB executables: peak RSS ${peakMiB.toFixed(1)} MiB, ${(result.ms / 1000).toFixed(2)} s`,
    );
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
const [small, large] = results;
/** @type {{ cores: number, node: string, results: typeof results, largeOverSmall?: number }} */
const summary = { cores: os.availableParallelism(), node: process.version, results };
if (small && large) summary.largeOverSmall = +(large.peakRssMiB / small.peakRssMiB).toFixed(2);
console.log(JSON.stringify(summary));
