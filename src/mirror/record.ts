/**
 * What a mirrored folder records about where its release came from, in the release manifest's format so that
 * `verify` and `publish` read the protocols from it (`{"version":1,"metadata":{"protocol_versions":[…]}}`), with
 * the origin's facts beside them under `mirror`. Protocols are normalised to what the private registry accepts:
 * `5.1` is a minor of protocol 5, recorded as `5.0`; a protocol it cannot hold (`7.0`) is dropped with a note.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import { mirroredFileNames } from '../release/filenames.js';
import { PROTOCOL_VERSIONS, normalizeProtocols } from '../terraform/names.js';

/** The origin's facts kept in the record and the report. */
export interface MirrorOrigin {
  /** `registry.terraform.io/hashicorp/random`. */
  source: string;
  /** The origin's base URL. */
  url: string;
  /** The long id of the key that made the signature, as the origin names it. */
  keyId: string;
  /** The origin's `trust_signature` and `source` of that key (empty when it gave none). */
  trustSignature: string;
  keySource: string;
  keySourceUrl: string | null;
  /** The protocols as the origin stated them, before normalising. */
  protocols: string[];
}

/** The record's JSON text. */
export function recordText(protocols: string[], origin: MirrorOrigin, platforms: string[]): string {
  const document = {
    version: 1,
    metadata: { protocol_versions: protocols },
    mirror: {
      source: origin.source,
      origin: origin.url,
      key_id: origin.keyId,
      trust_signature: origin.trustSignature,
      key_source: origin.keySource,
      key_source_url: origin.keySourceUrl,
      origin_protocols: origin.protocols,
      platforms,
    },
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The origin's protocols as the private registry accepts them; a VerificationError when none is left. */
export function normaliseProtocols(
  stated: readonly string[],
  label: string,
): { protocols: string[]; dropped: string[] } {
  const accepted: string[] = PROTOCOL_VERSIONS.slice();
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const protocol of stated) {
    const major = /^(\d+)(?:\.\d+)?$/.exec(protocol.trim())?.[1];
    const normal = major === undefined ? undefined : `${major}.0`;
    if (normal !== undefined && accepted.includes(normal)) kept.push(normal);
    else dropped.push(protocol);
  }
  if (kept.length === 0) {
    throw new VerificationError(
      `${label}: the origin states protocols ${stated.length === 0 ? '(none)' : stated.join(', ')}, none of which the private registry accepts (${accepted.join(', ')})`,
      {
        hint: 'Mirror a version that speaks plugin protocol 5 or 6; Terraform could not use this one from a private registry.',
        details: { protocols: stated },
      },
    );
  }
  return { protocols: normalizeProtocols(kept), dropped };
}

/** The origin's facts a mirrored folder records; null when its record cannot be read as one. */
export async function readRecord(
  folder: string,
  type: string,
  version: string,
): Promise<MirrorOrigin | null> {
  try {
    const file = path.join(folder, mirroredFileNames(type, version).record);
    const doc = JSON.parse(await readFile(file, 'utf8')) as { mirror?: Record<string, unknown> };
    const m = doc.mirror ?? {};
    const text = (value: unknown): string => (typeof value === 'string' ? value : '');
    return {
      source: text(m.source),
      url: text(m.origin),
      keyId: text(m.key_id),
      trustSignature: text(m.trust_signature),
      keySource: text(m.key_source),
      keySourceUrl: typeof m.key_source_url === 'string' ? m.key_source_url : null,
      protocols: Array.isArray(m.origin_protocols)
        ? m.origin_protocols.filter((p) => typeof p === 'string')
        : [],
    };
  } catch {
    return null;
  }
}
