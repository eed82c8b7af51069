/** The fixture release (`fixtures/release/`) as bytes and shasums, read on each call and checked against its SHA256SUMS. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../paths.js';
import { keyIdOf } from './gpgKeys.js';

/** One platform zip of the fixture release. */
export interface ReleaseZip {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  bytes: Buffer;
}

/** The fixture release (`fixtures/release/`): terraform-provider-example 1.2.3, protocol 6.0, signed by `signer`. */
export interface FixtureRelease {
  name: string;
  version: string;
  protocols: string[];
  keyId: string;
  sums: Buffer;
  sig: Buffer;
  zips: ReleaseZip[];
  zip(os: string, arch: string): ReleaseZip;
}

/** Reads the fixture release, taking each zip's shasum from SHA256SUMS (and checking it against the bytes). */
export function loadRelease(): FixtureRelease {
  const dir = join(REPO_ROOT, 'fixtures', 'release');
  const prefix = 'terraform-provider-example_1.2.3';
  const sums = readFileSync(join(dir, `${prefix}_SHA256SUMS`));
  const zips: ReleaseZip[] = [];
  for (const line of sums.toString('utf8').split('\n')) {
    const match =
      /^([0-9a-f]{64}) {2}(terraform-provider-example_1\.2\.3_([a-z0-9]+)_([a-z0-9]+)\.zip)$/.exec(line);
    if (!match) continue;
    const [, shasum, filename, os, arch] = match as unknown as [string, string, string, string, string];
    const bytes = readFileSync(join(dir, filename));
    if (createHash('sha256').update(bytes).digest('hex') !== shasum)
      throw new Error(`${filename}: shasum mismatch`);
    zips.push({ os, arch, filename, shasum, bytes });
  }
  return {
    name: 'example',
    version: '1.2.3',
    protocols: ['6.0'],
    keyId: keyIdOf('signer'),
    sums,
    sig: readFileSync(join(dir, `${prefix}_SHA256SUMS.sig`)),
    zips,
    zip(os, arch) {
      const found = zips.find((z) => z.os === os && z.arch === arch);
      if (!found) throw new Error(`the fixture release has no ${os}_${arch} zip`);
      return found;
    },
  };
}
