/**
 * A version's zips read straight from the origin when it publishes into a private registry (no `--to-dir`): each
 * zip's central directory and local headers by Range requests, and its body streamed once, by the upload that
 * proves it (src/consumer/rangedZip.ts, src/release/remoteZip.ts). No zip is written to disk.
 *
 * A host that ignores ranges (it answers 200 with the whole file) cannot be read this way: the version is then
 * downloaded into the scratch folder and published from there, as with `--to-dir`. GitHub's and
 * releases.hashicorp.com's storage answer ranges (`Accept-Ranges: bytes`), as object stores do.
 */
import { ProviderError, VerificationError } from '../errors.js';
import { openRangedZip } from '../consumer/rangedZip.js';
import type { Downloader } from '../registry/downloads.js';
import type { RemoteZip } from '../release/remoteZip.js';
import { fromOrigin } from './failures.js';
import type { OriginDownload } from './schemas.js';

/** The errors the origin's bodies failed with (`isOriginFailure`). */
const originFailures = new WeakSet<Error>();

/**
 * Whether a publish failed because the origin stopped serving a zip it streamed: the version cannot be completed
 * from it now, so what the run created is removed, as when a download failed before any write.
 */
export function isOriginFailure(error: unknown): boolean {
  return error instanceof Error && originFailures.has(error);
}

/** What opening a version's remote zips needs. */
export interface RemoteZipsInput {
  downloader: Downloader;
  /** The origin's host, named in messages. */
  host: string;
  /** `hashicorp/random 3.6.0`. */
  label: string;
  /** The most one zip may be. */
  limit: number;
}

/**
 * The version's zips as remote zips, by file name; undefined when the origin ignores ranges for any of them
 * (the caller then downloads the version).
 */
export async function openRemoteZips(
  input: RemoteZipsInput,
  documents: OriginDownload[],
): Promise<Map<string, RemoteZip> | undefined> {
  // The first zip tells whether the origin answers ranges: one request lost (its body not read) when it does not.
  const [first, ...others] = documents;
  const opened = [await openRemoteZip(input, first!)];
  if (opened[0] === undefined) return undefined;
  opened.push(...(await Promise.all(others.map((d) => openRemoteZip(input, d)))));
  if (opened.some((zip) => zip === undefined)) return undefined;
  return new Map(documents.map((d, i) => [d.filename, opened[i]!]));
}

/** One zip at the origin, its failures named as the version's downloads' (and its body's kept as such). */
function openRemoteZip(input: RemoteZipsInput, document: OriginDownload): Promise<RemoteZip | undefined> {
  const { label } = input;
  const link = document.download_url;
  const origin = { label, file: document.filename, link, limit: input.limit };
  // A failure of the origin's answer is the version's, named as a download's (exit 4; the upload retries it).
  const wrap = <T>(read: () => Promise<T>): Promise<T> =>
    fromOrigin(origin, read).catch((error: unknown) => {
      if (error instanceof ProviderError) originFailures.add(error);
      throw error;
    });
  const what = `${document.filename} of ${label}`;
  return openRangedZip({ ...input, link, what, filename: document.filename, wrap }).catch(
    (error: unknown) => {
      // Named by the version, as the mirror names its failures.
      if (error instanceof VerificationError && !error.message.startsWith(label))
        throw new VerificationError(`${label}: ${error.message}`, {
          hint: error.hint,
          details: error.details,
        });
      throw error;
    },
  );
}
