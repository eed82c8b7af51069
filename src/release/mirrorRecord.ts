/**
 * A folder `provider mirror --to-dir` wrote is held to its record (`…_mirror.json`, which stands in for the
 * manifest): every platform the record lists must be in the folder as a file. A zip deleted on the way, or
 * replaced by a link to something that is not a file (`/dev/zero`, never followed), stops the verification with
 * exit 3 naming it, rather than publishing a smaller version. A signature made by another key than the record's
 * (the origin's) is said in a warning: the folder's key was swapped, or `--key` names another.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import { readReleaseFile } from './checks.js';
import type { ReleaseLayout } from './layout.js';
import { kindOf } from './smallFile.js';
import type { SignerInfo } from './types.js';

/** What a mirrored folder's record says it holds. */
export interface MirrorRecordFacts {
  /** The record's file name. */
  file: string;
  /** The platforms copied (`linux_amd64`), as the record lists them; undefined when it lists none. */
  platforms: string[] | undefined;
  /** The long id of the origin's key that signed, as recorded; undefined when it records none. */
  keyId: string | undefined;
}

/** The record of a mirrored folder; undefined for any other release, or a record that is not JSON (said later). */
export async function readMirrorRecord(layout: ReleaseLayout): Promise<MirrorRecordFacts | undefined> {
  if (layout.mirrored !== true || layout.manifest === undefined) return undefined;
  const { content } = await readReleaseFile(layout, layout.manifest, 'manifest');
  let mirror: Record<string, unknown>;
  try {
    const doc = JSON.parse(Buffer.from(content).toString('utf8')) as { mirror?: unknown };
    if (typeof doc.mirror !== 'object' || doc.mirror === null) return undefined;
    mirror = doc.mirror as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const platforms = Array.isArray(mirror.platforms)
    ? mirror.platforms.filter((p): p is string => typeof p === 'string')
    : undefined;
  const keyId = typeof mirror.key_id === 'string' && mirror.key_id !== '' ? mirror.key_id : undefined;
  return { file: layout.manifest, platforms, keyId };
}

/** Throws a VerificationError naming the first platform the record lists that the folder does not hold. */
export async function checkRecordPlatforms(layout: ReleaseLayout, record: MirrorRecordFacts): Promise<void> {
  const held = new Set(layout.platforms.map((p) => `${p.os}_${p.arch}`));
  for (const platform of record.platforms ?? []) {
    if (held.has(platform)) continue;
    const filename = layout.shasums.replace(/_SHA256SUMS$/, `_${platform}.zip`);
    const what = await whatIsThere(path.join(layout.dir, filename));
    throw new VerificationError(`${filename} ${what}, though ${record.file} lists ${platform}`, {
      hint: 'The folder lost a file on its way: copy the version folder again from where it was mirrored, or mirror the version again. Published as it is, it would be a smaller version.',
      details: { file: filename, platform, record: record.file },
    });
  }
}

/** A warning when the signature is by another key than the one the record names; undefined when it is not. */
export function recordKeyWarning(record: MirrorRecordFacts, signer: SignerInfo): string | undefined {
  if (record.keyId === undefined) return undefined;
  const recorded = record.keyId.toUpperCase();
  const ids = [signer.keyId, signer.signingKeyId].map((id) => id.toUpperCase());
  if (ids.some((id) => id === recorded || id.endsWith(recorded))) return undefined;
  return `${record.file} records the origin's key ${record.keyId}, but the signature is by key ${signer.keyId}: this is not the key the version was mirrored with`;
}

/** What stands where a zip should be: nothing, a link to something that is not a file, or not a file. */
async function whatIsThere(file: string): Promise<string> {
  const entry = await fs.lstat(file).catch(() => undefined);
  if (entry === undefined) return 'is missing';
  if (!entry.isSymbolicLink()) return `is ${kindOf(entry)}, not a file`;
  const target = await fs.stat(file).catch(() => undefined);
  return target === undefined
    ? 'is a link to nothing'
    : `is a link to ${kindOf(target)}, which is not followed`;
}
