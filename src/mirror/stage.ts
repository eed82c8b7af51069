/**
 * One version into one folder, verified before it is there: the platforms' documents are read, the signed list
 * checked (./signed.ts), the zips downloaded into a temporary folder inside `--to-dir` (one progress step, the
 * version's, with a transfer per zip) and each compared with the origin's `shasum`, the signer's key and the
 * record written beside them, and the whole folder verified as `provider verify` does (zip contents included).
 * Only then is it renamed into place; any failure removes the temporary folder, so nothing of a version that does
 * not hold is left. A folder that is only a scratch copy for publish (`verify: false`) skips that last check:
 * publish's core makes the same one, zip contents included, before its first write.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import { mapPool } from '../pool.js';
import type { Downloader } from '../registry/downloads.js';
import { mirroredFileNames, releaseFileNames } from '../release/filenames.js';
import { folderKeySource } from '../release/keySource.js';
import type { VerifiedRelease } from '../release/types.js';
import { verifyRelease } from '../release/verify.js';
import { comparePlatforms, platformName, type PlatformKey } from '../terraform/names.js';
import type { Output } from '../ui/output.js';
import type { Progress } from '../ui/progress.js';
import { fromOrigin } from './failures.js';
import type { Origin, OriginProvider } from './origin.js';
import { normaliseProtocols, recordText, type MirrorOrigin } from './record.js';
import type { OriginDownload } from './schemas.js';
import { openRemoteZips } from './remoteZips.js';
import { MAX_ZIP_BYTES } from '../consumer/rangedZip.js';
import { checkSignedList, type SignedList } from './signed.js';
import type { RemoteZip } from '../release/remoteZip.js';

/** What every part of a mirror run shares: where it runs, how it downloads, where it reports, its clock. */
export interface MirrorRunContext {
  cwd: string;
  downloader: Downloader;
  output: Output;
  /** One rendering for the whole run: each version's step and downloads, then publish's uploads. */
  progress: Progress;
  now: () => Date;
  signal?: AbortSignal | undefined;
}

/** What staging one version needs. */
export interface StageInput extends MirrorRunContext {
  origin: Origin;
  /** The origin's base URL, recorded. */
  originUrl: string;
  provider: OriginProvider;
  version: string;
  /** The protocols the versions list states. */
  protocols: string[];
  platforms: PlatformKey[];
  /** The versions list named no platforms for the version: those asked for were not listed, only asked for. */
  unlisted?: boolean | undefined;
  /** The version's final folder. */
  folder: string;
  /** `--to-dir`: the temporary folder is made inside it, so that the rename stays on one file system. */
  root: string;
  /**
   * Whether to verify the folder as `provider verify` does before it is renamed into place: false only when it
   * is handed to publish, which verifies it the same way before writing anything (checking it twice would
   * hash and inflate every byte twice).
   */
  verify: boolean;
  /**
   * Whether the zips may be left at the origin, read by ranges and streamed by the uploads that prove them
   * (./remoteZips.ts): a version published into a private registry. A host that ignores ranges is downloaded.
   */
  stream?: boolean | undefined;
  /**
   * The policy's decision once the signed list is checked (./admit.ts), before anything of the version is written:
   * throws when it refuses.
   */
  admit?: ((signed: SignedList) => void) | undefined;
}

/** A version staged into its folder. */
export interface StagedVersion {
  /** The platforms in the folder. */
  platforms: PlatformKey[];
  /** The protocols recorded in the folder. */
  protocols: string[];
  origin: MirrorOrigin;
  /** Platforms the origin lists but serves no download for (hashicorp/terraform#33388). */
  missing: string[];
  /** Protocols the origin stated that the private registry cannot hold. */
  droppedProtocols: string[];
  /** The zips left at the origin (`stream`), by file name; undefined when they are in the folder. */
  remote: Map<string, RemoteZip> | undefined;
}

const CONCURRENT_DOWNLOADS = 4;

/** Downloads, checks and writes one version; throws (exit 3 for what does not hold) and leaves nothing behind. */
export async function stageVersion(input: StageInput): Promise<StagedVersion> {
  const { origin, provider, version, output } = input;
  const label = `${provider.namespace}/${provider.type} ${version}`;
  const read = await Promise.all(
    input.platforms.map(async (p) => ({ p, doc: await origin.download(provider, version, p) })),
  );
  const documents = read.flatMap(({ doc }) => (doc === undefined ? [] : [doc]));
  const missing = read.filter(({ doc }) => doc === undefined).map(({ p }) => platformName(p));
  for (const name of missing) {
    const said = input.unlisted === true ? `${name}` : `it`;
    const lists = input.unlisted === true ? '' : ` lists ${name} but`;
    output.warn(`${label}: ${origin.host}${lists} serves no download for ${said} (skipped)`);
  }
  if (documents.length === 0) {
    throw new VerificationError(
      `${label}: ${origin.host} serves none of the platforms asked for (${input.platforms.map(platformName).join(', ')})`,
      {
        hint: 'Choose platforms the version is published for (--platforms), or another version.',
      },
    );
  }
  const stated = documents[0]!.protocols ?? input.protocols;
  const { protocols, dropped } = normaliseProtocols(stated, label);
  const signed = await checkSignedList({
    label,
    type: provider.type,
    version,
    host: origin.host,
    documents,
    downloader: input.downloader,
    now: input.now(),
    warn: (message) => output.warn(message),
  });
  input.admit?.(signed);
  const mirrorOrigin: MirrorOrigin = {
    source: `${origin.host}/${provider.namespace}/${provider.type}`,
    url: input.originUrl,
    keyId: signed.signer.keyId,
    trustSignature: signed.key.trust_signature ?? '',
    keySource: signed.key.source ?? '',
    keySourceUrl: signed.key.source_url ?? null,
    protocols: stated,
  };
  await mkdir(input.root, { recursive: true });
  const temp = await mkdtemp(path.join(input.root, '.mirror-'));
  try {
    const files = releaseFileNames(provider.type, version);
    const extra = mirroredFileNames(provider.type, version);
    await writeFile(path.join(temp, files.shasums), signed.shasumsBytes);
    await writeFile(path.join(temp, files.signature), signed.signatureBytes);
    await writeFile(path.join(temp, extra.key), signed.key.ascii_armor);
    const platforms = documents.map((d) => `${d.os}_${d.arch}`);
    await writeFile(path.join(temp, extra.record), recordText(protocols, mirrorOrigin, platforms));
    const host = origin.host;
    const remote =
      input.stream === true
        ? await openRemoteZips({ ...input, host, label, limit: MAX_ZIP_BYTES }, documents)
        : undefined;
    if (input.stream === true && remote === undefined)
      output.info(`${label}: ${host} does not answer range requests; its zips are downloaded first`);
    if (remote === undefined) await downloadZips(input, documents, temp, label);
    // The check proves the folder holds what was just written (these platforms, these protocols), or throws.
    if (input.verify) await verifyFolder(temp, input);
    await rm(input.folder, { recursive: true, force: true });
    await mkdir(path.dirname(input.folder), { recursive: true });
    await rename(temp, input.folder);
    return {
      platforms: documents.map((d) => ({ os: d.os, arch: d.arch })).sort(comparePlatforms),
      protocols,
      origin: mirrorOrigin,
      missing,
      droppedProtocols: dropped,
      remote,
    };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** The version's zips into the temporary folder, a few at once, as one progress step. */
async function downloadZips(
  input: StageInput,
  documents: OriginDownload[],
  temp: string,
  label: string,
): Promise<void> {
  const names = input.platforms.map(platformName).join(', ');
  const step = input.progress.downloads(`Mirroring ${label} (${names})`, documents.length, label);
  try {
    await mapPool(documents, CONCURRENT_DOWNLOADS, (d) => downloadZip(d, temp, label, input));
  } catch (error) {
    step.fail();
    throw error;
  }
  step.succeed();
}

/** One zip into the temporary folder, its bytes compared with the origin's `shasum` as they stream in. */
async function downloadZip(
  document: OriginDownload,
  temp: string,
  label: string,
  input: StageInput,
): Promise<void> {
  const file = path.join(temp, document.filename);
  const what = `${document.filename} of ${label}`;
  const transfer = input.progress.transfer(document.filename, undefined);
  let sha256: string;
  try {
    const onBytes = (received: number, total: number | undefined): void => transfer.update(received, total);
    const origin = { label, file: document.filename, link: document.download_url, limit: MAX_ZIP_BYTES };
    ({ sha256 } = await fromOrigin(origin, () =>
      input.downloader.toFile(document.download_url, what, file, undefined, onBytes, MAX_ZIP_BYTES),
    ));
  } catch (error) {
    transfer.fail();
    throw error;
  }
  if (sha256 === document.shasum.toLowerCase()) {
    transfer.done();
    return;
  }
  transfer.fail();
  throw new VerificationError(
    `${label}: ${document.filename} from ${input.origin.host} hashes to ${sha256}, the origin and its signed SHA256SUMS say ${document.shasum}`,
    {
      hint: 'The origin served other bytes than it signed; nothing of the version was written. Try again later, or report it to the origin.',
      details: { file: document.filename, expected: document.shasum, actual: sha256 },
    },
  );
}

/** The folder verified as `provider verify` would, with the key it carries. */
export async function verifyFolder(
  dir: string,
  input: Pick<StageInput, 'provider' | 'version' | 'cwd' | 'output' | 'now' | 'signal'>,
): Promise<VerifiedRelease> {
  const keySource = await folderKeySource(dir);
  if (keySource === undefined) {
    throw new VerificationError(`${dir} holds no signing key file`, { hint: 'Mirror the version again.' });
  }
  return verifyRelease({
    dir,
    cwd: input.cwd,
    output: input.output,
    now: input.now,
    keySource,
    name: input.provider.type,
    version: input.version,
    command: 'mirror',
    hashing: { signal: input.signal },
  });
}
