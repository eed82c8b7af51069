/**
 * Plugin protocol versions: from `--protocols`, the configuration file, or the release manifest
 * (`{"version":1,"metadata":{"protocol_versions":["6.0"]}}`). The registry accepts 4.0, 5.0 and 6.0.
 */
import { UsageError, VerificationError, shorten } from '../errors.js';
import { PROTOCOL_VERSIONS, normalizeProtocols } from '../terraform/names.js';
import type { ProtocolsSource } from './types.js';

const ALLOWED: readonly string[] = PROTOCOL_VERSIONS;
const MANIFEST_HINT =
  'Write it as goreleaser copies terraform-registry-manifest.json: {"version":1,"metadata":{"protocol_versions":["6.0"]}}';

/** Reads a manifest's protocol versions; throws a VerificationError naming the file when it is malformed. */
export function parseManifest(bytes: Uint8Array, file: string): string[] {
  const fail = (problem: string): VerificationError =>
    new VerificationError(`${file} is malformed: ${problem}`, { hint: MANIFEST_HINT, details: { file } });
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw fail(`not JSON (${(error as Error).message})`);
  }
  if (!isObject(doc)) throw fail('expected a JSON object');
  if (doc.version !== 1)
    throw fail(`"version" must be 1, not ${shorten(JSON.stringify(doc.version) ?? 'missing')}`);
  const metadata = doc.metadata;
  if (!isObject(metadata)) throw fail('"metadata" must be an object holding "protocol_versions"');
  const list = metadata.protocol_versions;
  if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string')) {
    throw fail('"metadata.protocol_versions" must be a non-empty list of strings such as ["6.0"]');
  }
  const bad = list.find((p) => !ALLOWED.includes(p));
  if (bad !== undefined) {
    throw new VerificationError(
      `${file}: protocol version "${shorten(bad)}" is not one of ${ALLOWED.join(', ')}`,
      {
        hint: `${MANIFEST_HINT} (the registry accepts ${ALLOWED.join(', ')}).`,
        details: { file, protocol: shorten(bad) },
      },
    );
  }
  return normalizeProtocols(list);
}

/** Parses `--protocols 5.0,6.0`. */
export function parseProtocolsFlag(text: string): string[] {
  const list = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const bad = list.find((p) => !ALLOWED.includes(p));
  if (list.length === 0 || bad !== undefined) {
    throw new UsageError(
      bad === undefined
        ? '--protocols is empty'
        : `--protocols: "${bad}" is not a protocol version the registry accepts (${ALLOWED.join(', ')})`,
      { hint: 'Give a comma-separated list such as --protocols 6.0 or --protocols 5.0,6.0.' },
    );
  }
  return normalizeProtocols(list);
}

/** The chosen protocols: flag > configuration file > manifest; a disagreement with the manifest warns. */
export function chooseProtocols(input: {
  flag?: string[] | undefined;
  config?: string[] | undefined;
  manifest?: string[] | undefined;
  manifestFile?: string | undefined;
}): { protocols: string[]; source: ProtocolsSource; warnings: string[] } {
  const explicit = input.flag ?? input.config;
  const source: ProtocolsSource = input.flag ? 'flag' : 'config';
  if (explicit !== undefined) {
    const warnings: string[] = [];
    if (input.manifest !== undefined && input.manifest.join() !== explicit.join()) {
      const by = source === 'flag' ? '--protocols' : 'the configuration file';
      warnings.push(
        `${by} says ${explicit.join(', ')} but ${input.manifestFile ?? 'the manifest'} says ${input.manifest.join(', ')}; using ${explicit.join(', ')}`,
      );
    }
    return { protocols: normalizeProtocols(explicit), source, warnings };
  }
  if (input.manifest !== undefined) return { protocols: input.manifest, source: 'manifest', warnings: [] };
  throw new UsageError('The release does not say which plugin protocol versions it speaks', {
    hint: 'Add a ..._manifest.json to the release (goreleaser copies terraform-registry-manifest.json), or pass --protocols 6.0 (5.0 for SDKv2 providers).',
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
