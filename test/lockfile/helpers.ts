/**
 * What the lock-file tests compare with: the fixture release's lock material, and the lock file Terraform would
 * write for it, spelled out by hand from the documented format (hashicorp/terraform:
 * internal/depsfile/locks_file.go; samples: pypi/infra: terraform/.terraform.lock.hcl), with the fixture's
 * `h1:` values (FIXTURE_H1, computed outside this project) and a `zh:` for every line of its SHA256SUMS.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LockMaterial } from '../../src/lockfile/source.js';
import { FIXTURE_H1, FIXTURES, PLATFORMS, SUMS } from '../release/helpers.js';

/** The fixture release's SHA256SUMS lines as `[sha256, filename]`. */
export const FIXTURE_SUMS: [string, string][] = fs
  .readFileSync(path.join(FIXTURES, 'release', SUMS), 'utf8')
  .trimEnd()
  .split('\n')
  .map((line) => line.split('  ') as [string, string]);

/** The lock material of the fixture release, built from the pinned values (not from src/). */
export function fixtureMaterial(): LockMaterial {
  const sha = (platform: string) => FIXTURE_SUMS.find(([, f]) => f.endsWith(`_${platform}.zip`))![0];
  return {
    name: 'example',
    version: '1.2.3',
    platforms: PLATFORMS.map((p) => {
      const [os, arch] = p.split('_') as [string, string];
      return { os, arch, hashes: [FIXTURE_H1[p], `zh:${sha(p)}`] };
    }),
    shasums: FIXTURE_SUMS.map(([s]) => s),
  };
}

/** The address the tests lock under (the default hostname, organization example-org). */
export const ADDRESS = 'app.terraform.io/example-org/example';

/** The header of a lock file Terraform creates. */
export const HEADER =
  '# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\n';

/** The lines of the fixture's `zh:` hashes, sorted: one per line of SHA256SUMS, the manifest's included. */
export const ZH_LINES = [
  '    "zh:24c86909e1e1942f1012eca63a7b4f6264ad469e839d5135bf9b6e8d1a13617a",',
  '    "zh:26693bd82fa2206850a0a09f9f23114df999cd316b99374f1d646c80a4ad1269",',
  '    "zh:6546e445d34f62f1f89802234b3cc606bab3d40c16324db7e4666dc71e22d0ea",',
  '    "zh:bd7aeba4436e5e545dc00256fad6bb120ca43487ae0cffc7af808f11a7f7e70e",',
  '    "zh:d7dcc9d8a3404baf3f418236a080caaa3b567f850c8ee0b2986220ae0f7eb5c1",',
  '    "zh:f76b591723b07b6d33ca40d0ea8bda14e9f61465177cff8960afa7036b11e70c",',
];

/** The fixture release's block for every platform, as `terraform providers lock` with all five -platform writes it. */
export const FIXTURE_BLOCK = [
  `provider "${ADDRESS}" {`,
  '  version = "1.2.3"',
  '  hashes = [',
  '    "h1:8R6Zp2qy/MaNGZAYNr59B5gMtYMlKr4toFGKCZxjoiw=",',
  '    "h1:MkaeXlI13zqwYhhtYB5Xdgn4TbscxW9AY4rlFd/U0PU=",',
  '    "h1:YKpnBdIzIPiMhkHaGgJKj0ZLBi+s7i8Y29dA3MOAKao=",',
  '    "h1:gt027XmP27ybr+Et7u9SiQ0/9VU8wN6sC62QfvTxtEY=",',
  '    "h1:s5DjVaODHLaOuYq2F66YKvmnBTgM8fC0ZygmgbhLe7s=",',
  ...ZH_LINES,
  '  ]',
  '}',
].join('\n');

/** A whole new lock file holding the fixture's block. */
export const FIXTURE_LOCK_FILE = `${HEADER}${FIXTURE_BLOCK}\n`;

/**
 * What `terraform init` on an Apple silicon Mac writes for the fixture release (the before of the README
 * example): the `h1:` of darwin_arm64 only, and every `zh:` of the signed SHA256SUMS.
 */
export const MAC_INIT_LOCK_FILE = [
  HEADER.trimEnd(),
  '',
  `provider "${ADDRESS}" {`,
  '  version     = "1.2.3"',
  '  constraints = "~> 1.2"',
  '  hashes = [',
  '    "h1:MkaeXlI13zqwYhhtYB5Xdgn4TbscxW9AY4rlFd/U0PU=",',
  ...ZH_LINES,
  '  ]',
  '}',
  '',
].join('\n');

/** An `h1:` no registry serves. */
export const NEVER_SERVED = 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** A block of a public registry's provider, which `lock check` leaves to that registry. */
export const PUBLIC_BLOCK = [
  'provider "registry.terraform.io/hashicorp/random" {',
  '  version = "3.6.3"',
  '  hashes = [',
  '    "h1:zG9uFP8l9u+yGZZvi5Te7PV62j50azpgwPunq2vTm1E=",',
  '  ]',
  '}',
].join('\n');
