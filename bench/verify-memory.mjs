#!/usr/bin/env node
// Peak memory of `provider verify` on a small and a large release: 4 platform archives of 8 MB, then of 256 MB,
// filled with incompressible (random) data and signed with the test-only `signer` key. Hashing streams every
// file through a fixed buffer, so the large release must not need much more memory than the small one.
//
// Usage: npm run build && node bench/verify-memory.mjs [--keep] [--sizes 8,256]
// Needs about 1.1 GB of free space in the temporary folder. Prints one line per size and a JSON summary.
import { spawn } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import * as openpgp from 'openpgp';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'provider.js');
const KEYS = path.join(ROOT, 'fixtures', 'keys');
const PLATFORMS = ['darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];
const MiB = 1024 * 1024;

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const sizesArg = args[args.indexOf('--sizes') + 1];
const sizes = args.includes('--sizes') && sizesArg ? sizesArg.split(',').map(Number) : [8, 256];

if (!fs.existsSync(path.join(ROOT, 'dist', 'release', 'run.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}

/** Writes a stored (uncompressed) zip with one executable member of `size` random bytes, streaming. */
function writeZip(file, member, size) {
  const name = Buffer.from(member);
  const fd = fs.openSync(file, 'w');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x0800, 6);
  local.writeUInt32LE(size, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  fs.writeSync(fd, local);
  fs.writeSync(fd, name);
  const chunk = Buffer.alloc(4 * MiB);
  let crc = 0;
  for (let left = size; left > 0; left -= chunk.length) {
    const part = chunk.subarray(0, Math.min(chunk.length, left));
    randomFillSync(part);
    crc = crc32(part, crc);
    fs.writeSync(fd, part);
  }
  const crcBuffer = Buffer.alloc(4);
  crcBuffer.writeUInt32LE(crc, 0);
  fs.writeSync(fd, crcBuffer, 0, 4, 14);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE((3 << 8) | 20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x0800, 8);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(size, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE((0o100755 << 16) >>> 0, 38);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(local.length + name.length + size, 16);
  fs.writeSync(fd, Buffer.concat([central, name, end]), 0, undefined, local.length + name.length + size);
  fs.closeSync(fd);
}

function sha256(file) {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(4 * MiB);
  const fd = fs.openSync(file, 'r');
  for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
    hash.update(buffer.subarray(0, n));
  fs.closeSync(fd);
  return hash.digest('hex');
}

/** A signed release of `example` 1.0.0 with 4 platforms of `size` bytes each. */
async function makeRelease(dir, size) {
  fs.mkdirSync(dir, { recursive: true });
  const prefix = 'terraform-provider-example_1.0.0';
  const lines = [];
  for (const platform of PLATFORMS) {
    const filename = `${prefix}_${platform}.zip`;
    const exe = `terraform-provider-example_v1.0.0${platform.startsWith('windows') ? '.exe' : ''}`;
    writeZip(path.join(dir, filename), exe, size);
    lines.push(`${sha256(path.join(dir, filename))}  ${filename}`);
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
  fs.writeFileSync(path.join(dir, `${prefix}_SHA256SUMS`), sums);
  const signingKeys = await openpgp.readPrivateKey({
    armoredKey: fs.readFileSync(path.join(KEYS, 'signer.sec.asc'), 'utf8'),
  });
  const message = await openpgp.createMessage({ binary: sums });
  const signature = await openpgp.sign({ message, signingKeys, detached: true, format: 'binary' });
  fs.writeFileSync(path.join(dir, `${prefix}_SHA256SUMS.sig`), signature);
}

/** Runs `provider verify` on the release and returns its exit code, peak RSS (KiB) and wall time. */
function measure(dir) {
  const useTime = fs.existsSync('/usr/bin/time');
  const argv = [BIN, 'verify', dir, '--key', path.join(KEYS, 'signer.pub.asc'), '--json'];
  const [cmd, cmdArgs] = useTime
    ? ['/usr/bin/time', ['-v', process.execPath, ...argv]]
    : [process.execPath, argv];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(cmd, cmdArgs, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    let polledKiB = 0;
    const poll = setInterval(() => {
      try {
        const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
        polledKiB = Math.max(polledKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {
        // The process is gone, or /proc is not there (macOS): /usr/bin/time has the figure.
      }
    }, 20);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const timeKiB = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? 0);
      resolve({ code, peakKiB: timeKiB || polledKiB, ms, ok: stdout.includes('"ok":true'), stdout, stderr });
    });
  });
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-bench-'));
const results = [];
try {
  for (const mb of sizes) {
    const dir = path.join(work, `release-${mb}mb`);
    process.stderr.write(`generating 4 × ${mb} MiB in ${dir}…\n`);
    await makeRelease(dir, mb * MiB);
    await measure(dir); // warm the page cache so the figure is about the program, not the disk
    const run = await measure(dir);
    if (run.code !== 0 || !run.ok) {
      console.error(run.stdout, run.stderr);
      throw new Error(`verify failed on the ${mb} MiB release (exit ${run.code})`);
    }
    results.push({
      archiveMiB: mb,
      totalMiB: mb * 4,
      peakRssMiB: +(run.peakKiB / 1024).toFixed(1),
      seconds: +(run.ms / 1000).toFixed(2),
    });
    console.log(
      `4 × ${String(mb).padStart(4)} MiB: peak RSS ${(run.peakKiB / 1024).toFixed(1)} MiB, ${(run.ms / 1000).toFixed(2)} s`,
    );
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
const [small, large] = results;
const summary = { cores: os.availableParallelism(), node: process.version, results };
if (small && large) summary.largeOverSmall = +(large.peakRssMiB / small.peakRssMiB).toFixed(2);
console.log(JSON.stringify(summary));
